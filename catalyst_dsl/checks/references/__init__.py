"""The reference checks: every name a template reads resolved where it is read, and typed."""
