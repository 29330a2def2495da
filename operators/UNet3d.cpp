#include "operators/UNet3d.hpp"

#include <stdexcept>

#include "operators/TensorOps.hpp"

namespace ufno {

UNet3d UNet3d::load(const WeightSource& w, const std::string& p, int c, double eps, float slope) {
  UNet3d u;
  u.conv1_ = Conv3d::load_block(w, p + ".conv1", c, c, 2, eps, slope);
  u.conv2_ = Conv3d::load_block(w, p + ".conv2", c, c, 2, eps, slope);
  u.conv2_1_ = Conv3d::load_block(w, p + ".conv2_1", c, c, 1, eps, slope);
  u.conv3_ = Conv3d::load_block(w, p + ".conv3", c, c, 2, eps, slope);
  u.conv3_1_ = Conv3d::load_block(w, p + ".conv3_1", c, c, 1, eps, slope);
  u.deconv2_ = ConvTranspose3d::load_block(w, p + ".deconv2", c, c, slope);
  u.deconv1_ = ConvTranspose3d::load_block(w, p + ".deconv1", 2 * c, c, slope);
  u.deconv0_ = ConvTranspose3d::load_block(w, p + ".deconv0", 2 * c, c, slope);
  u.output_ = Conv3d::load_plain(w, p + ".output_layer", 2 * c, c, 3);
  return u;
}

Tensor UNet3d::forward(const Tensor& x) const {
  for (int a = 2; a < 5; ++a)
    if (x.extent(a) % 8 != 0)
      throw std::invalid_argument("UNet3d: extents of " + to_string(shape_of(x)) +
                                  " must be divisible by 8");
  Tensor e1 = conv1_.forward(x);
  Tensor e2 = conv2_1_.forward(conv2_.forward(e1));
  Tensor e3 = conv3_1_.forward(conv3_.forward(e2));
  Tensor d2 = deconv2_.forward(e3);
  e3 = Tensor();
  Tensor d1 = deconv1_.forward(concat_channels(e2, d2));
  e2 = d2 = Tensor();
  Tensor d0 = deconv0_.forward(concat_channels(e1, d1));
  e1 = d1 = Tensor();
  return output_.forward(concat_channels(x, d0));
}

}  // namespace ufno
