"""The forward pass of ufno_torch.Net3d, formulated for training speed on a CPU.

Same parameters, same state_dict, same function (to float32 rounding): training calls
`forward(model, x)` instead of `model(x)`, and the checkpoint still converts and runs in C++ as
before. Debian's PyTorch 1.13 spends a training step on the CPU mostly on paths that are slow for
this network's shapes, and each is replaced by an equivalent computation on a fast path:

- Spectral convolution: instead of full rfftn/irfftn, pruned DFTs that compute only the kept
  bins (the C++ engine's approach, fft/TruncatedRealDft.hpp): along T a real DFT to the low mt
  bins, along Y and X complex DFTs to the mx/my low and high bins, each one matrix product. The
  four corner weights become one block, so the mode mix is one einsum. The inverse is the
  transpose chain, ending in the c2r sum that (like irfft) ignores the imaginary part of the
  k = 0 and Nyquist bins.
- The per-voxel `w_k` (a kernel-1 Conv1d, which PyTorch runs through its slow im2col conv2d) as
  a matrix product.
- ConvTranspose3d(kernel 4, stride 2, padding 1) as a sub-pixel convolution: one kernel-3
  Conv3d (oneDNN) producing the 8 output parities, interleaved by a reshape. The 3x3x3 kernels
  are gathered from the 4x4x4 transposed kernel on every call, so gradients flow to the
  original parameter.
- The head (fc1, ReLU, fc2) is pointwise, so it runs after the crop instead of before it: the
  padded cells it would compute are thrown away anyway.
"""
import math

import torch
import torch.nn.functional as F

from ufno.models import net3d as ufno_torch

_DFT_CACHE = {}


def _kept_bins(n, m):
    """The m low and m high bins of an n-point DFT, in the corner order of weights1..4."""
    return list(range(m)) + list(range(n - m, n))


def _dft_matrices(n, bins, real_input, dtype, device):
    """(forward, inverse) DFT matrices for the given bins, computed in float64.

    real_input: forward is (n, len(bins)) of cos and -sin (two real matrices); inverse is the
    c2r weights (len(bins), n) for cos and sin, with irfft's factor 2 for the doubled bins.
    Otherwise forward (n, len(bins)) and inverse (len(bins), n) complex, inverse scaled by 1/n.
    """
    key = (n, tuple(bins), real_input, dtype, device)
    if key in _DFT_CACHE:
        return _DFT_CACHE[key]
    t = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    k = torch.tensor(bins, dtype=torch.float64).unsqueeze(0)
    theta = 2.0 * math.pi * t * k / n  # (n, bins)
    if real_input:
        fwd = (torch.cos(theta).to(dtype).to(device), (-torch.sin(theta)).to(dtype).to(device))
        weight = torch.tensor([1.0 if (b == 0 or 2 * b == n) else 2.0 for b in bins],
                              dtype=torch.float64).unsqueeze(1) / n
        inv = ((torch.cos(theta).T * weight).to(dtype).to(device),
               (-torch.sin(theta).T * weight).to(dtype).to(device))
    else:
        cdtype = torch.complex64 if dtype == torch.float32 else torch.complex128
        fwd = torch.polar(torch.ones_like(theta), -theta).to(cdtype).to(device)
        inv = (torch.polar(torch.ones_like(theta), theta).T / n).to(cdtype).to(device)
    _DFT_CACHE[key] = (fwd, inv)
    return fwd, inv


def spectral_conv(layer, x):
    """ufno_torch.SpectralConv3d's forward by pruned DFTs. x: (B, C, X, Y, T) real."""
    _, _, nx, ny, nt = x.shape
    mx, my, mt = layer.modes
    (ct, st), (ict, ist) = _dft_matrices(nt, list(range(mt)), True, x.dtype, x.device)
    fy, iy = _dft_matrices(ny, _kept_bins(ny, my), False, x.dtype, x.device)
    fx, ix = _dft_matrices(nx, _kept_bins(nx, mx), False, x.dtype, x.device)
    xt = torch.complex(x @ ct, x @ st)                                  # (B, C, X, Y, mt)
    xt = torch.einsum("bcxyk,yl->bcxlk", xt, fy)                        # (B, C, X, 2my, mt)
    xt = torch.einsum("bcxyk,xl->bclyk", xt, fx)                        # (B, C, 2mx, 2my, mt)
    w = torch.cat((torch.cat((layer.weights1, layer.weights2), dim=2),
                   torch.cat((layer.weights3, layer.weights4), dim=2)), dim=3)
    yt = torch.einsum("bixyk,ioxyk->boxyk", xt, w.to(xt.dtype))        # (B, O, 2mx, 2my, mt)
    yt = torch.einsum("boxyk,xl->bolyk", yt, ix)                        # (B, O, X, 2my, mt)
    yt = torch.einsum("boxyk,yl->boxlk", yt, iy)                        # (B, O, X, Y, mt)
    return yt.real @ ict + yt.imag @ ist                                # (B, O, X, Y, T)


# Parity r, tap offset d in {-1, 0, 1} -> index of the 4-tap transposed kernel (4 = a zero tap):
# output 2m uses x[m] w[1] + x[m-1] w[3]; output 2m+1 uses x[m+1] w[0] + x[m] w[2].
_SUBPIXEL_TAPS = ((3, 1, 4), (4, 2, 0))


def _subpixel_weight(wt):
    """(Cin, Cout, 4, 4, 4) transposed kernel -> (Cout * 8, Cin, 3, 3, 3) sub-pixel kernel whose
    output channel c * 8 + (rx * 4 + ry * 2 + rt) is parity (rx, ry, rt) of channel c."""
    wp = F.pad(wt, (0, 1, 0, 1, 0, 1))  # index 4 is zero on each kernel axis
    parts = []
    for rx in range(2):
        for ry in range(2):
            for rt in range(2):
                w = wp[:, :, list(_SUBPIXEL_TAPS[rx])][:, :, :, list(_SUBPIXEL_TAPS[ry])]
                parts.append(w[:, :, :, :, list(_SUBPIXEL_TAPS[rt])])
    w = torch.stack(parts, dim=2)  # (Cin, Cout, 8, 3, 3, 3)
    cin, cout = wt.shape[:2]
    return w.reshape(cin, cout * 8, 3, 3, 3).transpose(0, 1)


def deconv(block, x):
    """The U-Net's ConvTranspose3d(k4, s2, p1) + LeakyReLU block as a sub-pixel convolution."""
    conv, act = block[0], block[1]
    b, _, nx, ny, nt = x.shape
    cout = conv.weight.shape[1]
    y = F.conv3d(x, _subpixel_weight(conv.weight), conv.bias.repeat_interleave(8), padding=1)
    y = y.view(b, cout, 2, 2, 2, nx, ny, nt).permute(0, 1, 5, 2, 6, 3, 7, 4)
    return act(y.reshape(b, cout, 2 * nx, 2 * ny, 2 * nt))


def unet(net, x):
    """ufno_torch.U_net's forward with the sub-pixel deconvolutions."""
    out_conv1 = net.conv1(x)
    out_conv2 = net.conv2_1(net.conv2(out_conv1))
    out_conv3 = net.conv3_1(net.conv3(out_conv2))
    up2 = deconv(net.deconv2, out_conv3)
    up1 = deconv(net.deconv1, torch.cat((out_conv2, up2), dim=1))
    up0 = deconv(net.deconv0, torch.cat((out_conv1, up1), dim=1))
    return net.output_layer(torch.cat((x, up0), dim=1))


def pointwise(conv1d, x):
    """The kernel-1 Conv1d w_k on (B, C, X, Y, T) as one matrix product."""
    y = torch.einsum("oi,bixyt->boxyt", conv1d.weight[:, :, 0], x)
    return y + conv1d.bias.view(1, -1, 1, 1, 1)


def forward(model, x):
    """model(x) for a ufno_torch.Net3d, on the fast paths. x: (B, X, Y, T, C); returns (B, X, Y, T)."""
    assert isinstance(model, ufno_torch.Net3d)
    block = model.conv1
    _, nx, ny, nt, _ = x.shape
    h = block.fc0(ufno_torch.pad_input(x, model.padding)).permute(0, 4, 1, 2, 3)
    for k in range(block.n_fourier + block.n_ufourier):
        y = spectral_conv(getattr(block, "conv%d" % k), h) + pointwise(getattr(block, "w%d" % k), h)
        if k >= block.n_fourier:
            y = y + unet(getattr(block, "unet%d" % k), h)
        h = F.relu(y)
    h = h[:, :, :nx, :ny, :nt].permute(0, 2, 3, 4, 1)
    return block.fc2(F.relu(block.fc1(h)))[..., 0]
