"""Training a network, evaluating it, and editing trained networks (modes, averages)."""
