"""The IR: typed, frozen playbooks that every later phase consumes."""
