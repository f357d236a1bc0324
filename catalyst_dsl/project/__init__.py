"""The project around the playbooks: settings, discovery and the library as a whole."""
