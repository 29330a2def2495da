#include "operators/UNet3d.hpp"

#include <stdexcept>

#include "operators/LayerTimer.hpp"
#include "operators/SubpixelJoin.hpp"

namespace ufno {

UNet3d UNet3d::load(const WeightSource& w, const std::string& p, int c, double eps, float slope) {
  UNet3d u;
  u.p_.conv1 = Conv3d::load_block(w, p + ".conv1", c, c, 2, eps, slope);
  u.p_.conv2 = Conv3d::load_block(w, p + ".conv2", c, c, 2, eps, slope);
  u.p_.conv2_1 = Conv3d::load_block(w, p + ".conv2_1", c, c, 1, eps, slope);
  u.p_.conv3 = Conv3d::load_block(w, p + ".conv3", c, c, 2, eps, slope);
  u.p_.conv3_1 = Conv3d::load_block(w, p + ".conv3_1", c, c, 1, eps, slope);
  u.p_.deconv2 = ConvTranspose3d::load_block(w, p + ".deconv2", c, c, slope);
  u.p_.deconv1 = ConvTranspose3d::load_block(w, p + ".deconv1", 2 * c, c, slope);
  u.p_.deconv0 = ConvTranspose3d::load_block(w, p + ".deconv0", 2 * c, c, slope);
  u.p_.output = Conv3d::load_plain(w, p + ".output_layer", 2 * c, c, 3);
  for (const ConvTranspose3d* d : {&u.p_.deconv2, &u.p_.deconv1, &u.p_.deconv0})
    if (!d->has_parity_form())
      throw std::invalid_argument("UNet3d: " + p + ": transposed convolutions must be k4 s2");
  return u;
}

Tensor UNet3d::forward(const Tensor& x) const {
  for (int a = 2; a < 5; ++a)
    if (x.extent(a) % 8 != 0)
      throw std::invalid_argument("UNet3d: extents of " + to_string(shape_of(x)) +
                                  " must be divisible by 8");
  // Inside the U-Net every tensor is channels last, the convolution kernels' own layout: only
  // the input and the output are converted. The decoder's transposed convolutions run in
  // sub-pixel form, and each join writes the next convolution's input in one pass.
  using Scope = LayerTimer::Scope;
  constexpr auto first = backend::Layout::ChannelsFirst, last = backend::Layout::ChannelsLast;
  Tensor e1, e2, e3, join;
  {
    Scope t("  u-net encoder convs");
    e1 = p_.conv1.forward(x, first, last);
    e2 = p_.conv2_1.forward(p_.conv2.forward(e1, last, last), last, last);
    e3 = p_.conv3_1.forward(p_.conv3.forward(e2, last, last), last, last);
  }
  {
    Scope t("  u-net decoder deconvs + joins");
    join = join_skip_and_upsampled(e2, last, p_.deconv2.parity_outputs(e3, last),
                                   p_.deconv2.spec().padding);
    e2 = e3 = Tensor();
    join = join_skip_and_upsampled(e1, last, p_.deconv1.parity_outputs(join, last),
                                   p_.deconv1.spec().padding);
    e1 = Tensor();
    join = join_skip_and_upsampled(x, first, p_.deconv0.parity_outputs(join, last),
                                   p_.deconv0.spec().padding);
  }
  Scope t("  u-net output conv");
  return p_.output.forward(join, last, first);
}

}  // namespace ufno
