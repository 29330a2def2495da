"""PyTorch re-implementation of the U-FNO / FNO of Wen et al. (2022).

Written from the architecture description in /work/shared/ufno-reference.md. It exists only to
generate golden fixtures for the C++ code and to benchmark against; it is not used by the C++
side at run time. State_dict keys match the published checkpoints exactly (all prefixed `conv1.`
at Net3d level), so a model built here converts with ufno.convert like a published one.

Tensor conventions: the network input is channel-last (B, X, Y, T, C); inside the network
tensors are (B, C, X, Y, T); the output is (B, X, Y, T).
"""

import sys
import types
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

LEAKY_SLOPE = 0.1
BN_EPS = 1e-5


class SpectralConv3d(nn.Module):
    """Fourier layer: rfftn over (X, Y, T), multiply four corners of the spectrum, irfftn.

    weights1..4 have shape (in, out, mx, my, mt), complex64, and act on the corners
    [:mx, :my, :mt], [-mx:, :my, :mt], [:mx, -my:, :mt], [-mx:, -my:, :mt] (X, Y, T order;
    only the low mt bins of the half spectrum along T are kept).
    """

    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes = tuple(int(m) for m in modes)
        shape = (in_channels, out_channels) + self.modes
        scale = 1.0 / (in_channels * out_channels)
        for k in range(1, 5):
            w = scale * torch.rand(shape, dtype=torch.cfloat)
            setattr(self, "weights%d" % k, nn.Parameter(w))

    @staticmethod
    def _mix(x_ft, w):
        # (B, I, x, y, t) x (I, O, x, y, t) -> (B, O, x, y, t); the weights are cast so the layer
        # also runs in complex128 when the fixtures are computed in float64.
        return torch.einsum("bixyt,ioxyt->boxyt", x_ft, w.to(x_ft.dtype))

    def forward(self, x):
        b, _, nx, ny, nt = x.shape
        mx, my, mt = self.modes
        # Default normalisation: unscaled forward, 1/N inverse.
        x_ft = torch.fft.rfftn(x, dim=(-3, -2, -1))
        out_ft = torch.zeros(b, self.out_channels, nx, ny, nt // 2 + 1,
                             dtype=x_ft.dtype, device=x.device)
        out_ft[:, :, :mx, :my, :mt] = self._mix(x_ft[:, :, :mx, :my, :mt], self.weights1)
        out_ft[:, :, -mx:, :my, :mt] = self._mix(x_ft[:, :, -mx:, :my, :mt], self.weights2)
        out_ft[:, :, :mx, -my:, :mt] = self._mix(x_ft[:, :, :mx, -my:, :mt], self.weights3)
        out_ft[:, :, -mx:, -my:, :mt] = self._mix(x_ft[:, :, -mx:, -my:, :mt], self.weights4)
        # irfftn does the complex inverses over X and Y first and the c2r over T last. The
        # weighted spectrum is not Hermitian in the k_T = 0 plane, so this order matters: the
        # c2r drops the imaginary part that remains there after the X/Y inverses.
        return torch.fft.irfftn(out_ft, s=(nx, ny, nt), dim=(-3, -2, -1))


def _conv_block(cin, cout, kernel_size, stride, dropout):
    # Index 0 conv (no bias), 1 batch norm, 2 leaky ReLU, 3 dropout: keys conv*.0 / conv*.1.
    return nn.Sequential(
        nn.Conv3d(cin, cout, kernel_size, stride=stride, padding=(kernel_size - 1) // 2,
                  bias=False),
        nn.BatchNorm3d(cout, eps=BN_EPS),
        nn.LeakyReLU(LEAKY_SLOPE, inplace=True),
        nn.Dropout(dropout),
    )


def _deconv_block(cin, cout):
    # Doubles each spatial extent exactly: (n - 1) * 2 - 2 * 1 + 4 = 2n.
    return nn.Sequential(
        nn.ConvTranspose3d(cin, cout, kernel_size=4, stride=2, padding=1, bias=True),
        nn.LeakyReLU(LEAKY_SLOPE, inplace=True),
    )


class U_net(nn.Module):
    """Three-level 3-D U-Net used inside the U-Fourier layers (extents must divide by 8)."""

    def __init__(self, input_channels, output_channels, kernel_size=3, dropout_rate=0.0):
        super().__init__()
        cin, cout, k, p = input_channels, output_channels, kernel_size, dropout_rate
        self.conv1 = _conv_block(cin, cout, k, 2, p)
        self.conv2 = _conv_block(cout, cout, k, 2, p)
        self.conv2_1 = _conv_block(cout, cout, k, 1, p)
        self.conv3 = _conv_block(cout, cout, k, 2, p)
        self.conv3_1 = _conv_block(cout, cout, k, 1, p)
        self.deconv2 = _deconv_block(cout, cout)
        self.deconv1 = _deconv_block(2 * cout, cout)
        self.deconv0 = _deconv_block(2 * cout, cout)
        self.output_layer = nn.Conv3d(cin + cout, cout, k, stride=1, padding=(k - 1) // 2,
                                      bias=True)

    def forward(self, x):
        out_conv1 = self.conv1(x)
        out_conv2 = self.conv2_1(self.conv2(out_conv1))
        out_conv3 = self.conv3_1(self.conv3(out_conv2))
        # Skip connections: concatenate (skip, upsampled) along channels.
        up2 = self.deconv2(out_conv3)
        up1 = self.deconv1(torch.cat((out_conv2, up2), dim=1))
        up0 = self.deconv0(torch.cat((out_conv1, up1), dim=1))
        return self.output_layer(torch.cat((x, up0), dim=1))


class SimpleBlock3d(nn.Module):
    """fc0 lift, n_fourier plain Fourier layers, n_ufourier U-Fourier layers, fc1/fc2 head.

    Works on the already padded, channel-last input (B, X, Y, T, C); returns (B, X, Y, T, 1).
    """

    def __init__(self, width=36, modes=(10, 10, 10), n_fourier=3, n_ufourier=3,
                 in_channels=12, hidden=128):
        super().__init__()
        self.width = width
        self.modes = tuple(int(m) for m in modes)
        self.n_fourier = n_fourier
        self.n_ufourier = n_ufourier
        n_layers = n_fourier + n_ufourier
        self.fc0 = nn.Linear(in_channels, width)
        # Registration order mirrors the published key order: conv*, w*, unet*.
        for k in range(n_layers):
            setattr(self, "conv%d" % k, SpectralConv3d(width, width, self.modes))
        for k in range(n_layers):
            setattr(self, "w%d" % k, nn.Conv1d(width, width, 1))
        for k in range(n_fourier, n_layers):
            setattr(self, "unet%d" % k, U_net(width, width, 3, 0.0))
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        b, nx, ny, nt, _ = x.shape
        x = self.fc0(x).permute(0, 4, 1, 2, 3)
        for k in range(self.n_fourier + self.n_ufourier):
            spectral = getattr(self, "conv%d" % k)(x)
            # w_k: a per-voxel channel mix written as Conv1d over the flattened voxels.
            pointwise = getattr(self, "w%d" % k)(x.reshape(b, self.width, -1))
            y = spectral + pointwise.view(b, self.width, nx, ny, nt)
            if k >= self.n_fourier:
                y = y + getattr(self, "unet%d" % k)(x)
            x = F.relu(y)
        x = x.permute(0, 2, 3, 4, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def pad_input(x, padding):
    """Pad a channel-last (B, X, Y, T, C) input at the end of each axis by `padding`.

    T and Y are replicate-padded (the last slice repeated), then X is zero-padded.
    """
    if padding == 0:
        return x
    x = torch.cat((x, x[:, :, :, -1:, :].expand(-1, -1, -1, padding, -1)), dim=3)   # T
    x = torch.cat((x, x[:, :, -1:, :, :].expand(-1, -1, padding, -1, -1)), dim=2)   # Y
    return F.pad(x, (0, 0, 0, 0, 0, 0, 0, padding))                               # X (zeros)


class Net3d(nn.Module):
    """U-FNO (n_ufourier > 0) or FNO (n_ufourier = 0; the paper-size FNO has n_fourier = 6).

    Input (B, X, Y, T, in_channels) float; output (B, X, Y, T), cropped back from the padded grid.
    """

    def __init__(self, width=36, modes=(10, 10, 10), n_fourier=3, n_ufourier=3, padding=8,
                 in_channels=12, hidden=128):
        super().__init__()
        self.padding = padding
        self.conv1 = SimpleBlock3d(width, modes, n_fourier, n_ufourier, in_channels, hidden)

    def forward(self, x):
        _, nx, ny, nt, _ = x.shape
        y = self.conv1(pad_input(x, self.padding))
        return y[:, :nx, :ny, :nt, 0]


def randomize_batchnorm(model, gen):
    """Give every BatchNorm random affine parameters and running statistics.

    Freshly built BatchNorms have mean 0, var 1, weight 1, bias 0, which would hide mistakes in
    the C++ folding of BN into the convolution. `gen` is a torch.Generator.
    """
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.running_mean.copy_(0.1 * torch.randn(n, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(n, generator=gen))
                m.weight.copy_(0.5 + torch.rand(n, generator=gen))
                m.bias.copy_(0.2 * torch.randn(n, generator=gen))
                m.num_batches_tracked.fill_(int(torch.randint(1, 1000, (1,), generator=gen)))
    return model


def to_float64(model):
    """Convert every parameter and buffer to double precision (complex to complex128).

    Module.double() leaves complex parameters alone, so this is done by hand.
    """
    for m in model.modules():
        for name, p in list(m._parameters.items()):
            if p is not None:
                dt = torch.complex128 if p.is_complex() else torch.float64
                m._parameters[name] = nn.Parameter(p.detach().to(dt), requires_grad=False)
        for name, b in list(m._buffers.items()):
            if b is not None and b.is_floating_point():
                m._buffers[name] = b.to(torch.float64)
    return model


def init_random_weights(model, gen, spectral_gain=1.5):
    """Re-draw every weight from `gen` (a torch.Generator) at scales where the spectral, the
    pointwise and the U-Net paths all contribute O(1) to each layer, so that a golden output
    catches a mistake in any of them. (PyTorch's default init makes the small test networks
    nearly constant.) Also randomizes the BatchNorms."""
    conv_types = (nn.Linear, nn.Conv1d, nn.Conv3d, nn.ConvTranspose3d)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, SpectralConv3d):
                for k in range(1, 5):
                    w = getattr(m, "weights%d" % k)
                    re = torch.randn(w.shape, generator=gen)
                    im = torch.randn(w.shape, generator=gen)
                    w.copy_(torch.complex(re, im) * (spectral_gain / m.in_channels ** 0.5))
            elif isinstance(m, conv_types):
                if isinstance(m, nn.ConvTranspose3d):
                    # Each output voxel of a stride-2 k=4 deconvolution sees 8 taps per channel.
                    fan_in = m.weight.shape[0] * 8
                else:
                    fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * (1.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))
    return randomize_batchnorm(model, gen)


def save_as_published_pickle(model, path, **save_kwargs):
    """torch.save(model) so that the pickle refers to `ufno.Net3d`, `ufno.SimpleBlock3d`,
    `ufno.SpectralConv3d` and `ufno.U_net`, like the published whole-model checkpoints.

    pickle records a class by its __module__ and checks that importing that module gives the
    same object back, so for the duration of the save the classes claim module `ufno` and a
    stand-in module of that name holding them is registered in sys.modules.
    """
    classes = (SpectralConv3d, U_net, SimpleBlock3d, Net3d)
    fake = types.ModuleType("ufno")
    for c in classes:
        setattr(fake, c.__name__, c)
    previous = sys.modules.get("ufno")
    old_modules = {c: c.__module__ for c in classes}
    try:
        sys.modules["ufno"] = fake
        for c in classes:
            c.__module__ = "ufno"
        with warnings.catch_warnings():
            # The legacy format wants each class's source, which the stand-in module lacks.
            warnings.filterwarnings("ignore", message="Couldn't retrieve source code")
            torch.save(model, path, **save_kwargs)
    finally:
        for c in classes:
            c.__module__ = old_modules[c]
        if previous is None:
            sys.modules.pop("ufno", None)
        else:
            sys.modules["ufno"] = previous
