"""The networks in PyTorch: the U-FNO (net3d), its fast CPU forward, the 4-D FNO."""
