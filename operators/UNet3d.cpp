#include "operators/UNet3d.hpp"

#include <stdexcept>

#include "operators/TensorOps.hpp"

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
  return u;
}

Tensor UNet3d::forward(const Tensor& x) const {
  for (int a = 2; a < 5; ++a)
    if (x.extent(a) % 8 != 0)
      throw std::invalid_argument("UNet3d: extents of " + to_string(shape_of(x)) +
                                  " must be divisible by 8");
  Tensor e1 = p_.conv1.forward(x);
  Tensor e2 = p_.conv2_1.forward(p_.conv2.forward(e1));
  Tensor e3 = p_.conv3_1.forward(p_.conv3.forward(e2));
  Tensor d2 = p_.deconv2.forward(e3);
  e3 = Tensor();
  Tensor d1 = p_.deconv1.forward(concat_channels(e2, d2));
  e2 = d2 = Tensor();
  Tensor d0 = p_.deconv0.forward(concat_channels(e1, d1));
  e1 = d1 = Tensor();
  return p_.output.forward(concat_channels(x, d0));
}

}  // namespace ufno
