"""logdoc: explains why a distributed training job died, from its logs."""
__version__ = "0.1.0"
