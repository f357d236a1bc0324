"""The control actions: the steps that hold other steps or shape the run's flow."""
