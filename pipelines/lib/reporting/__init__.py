"""What people open: the HTML report, the FOCUS export, CSV safety, whole-file writes, the training estimate."""
