// oneDNN 2.x implementation of ConvPrimitive: (de)convolution_forward with the formats chosen by
// the library (format_tag::any; channels-last for f32 on AVX-512), reorders to and from the
// caller's tensors only where their layout differs, the activation
// as an eltwise post-op. Primitives and reordered weights are cached per input shape.
#include <omp.h>
#include <dnnl.hpp>

#include <map>
#include <stdexcept>
#include <tuple>

#include "core/Bf16.hpp"
#include "core/LaunchLog.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno::backend {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

class OnednnConv final : public ConvPrimitive {
 public:
  OnednnConv(const ConvSpec& s, const std::vector<float>& w, const std::vector<float>& b)
      : s_(s), w_(w), b_(b) {
    const std::size_t k3 = std::size_t(s.kernel) * s.kernel * s.kernel;
    if (w_.size() != std::size_t(s.out_channels) * s.in_channels * k3)
      throw std::invalid_argument("conv: weight size does not match the spec");
    if (s.has_bias && b_.size() != std::size_t(s.out_channels))
      throw std::invalid_argument("conv: bias size does not match the spec");
    if (s.bf16 && !bf16_supported())
      throw std::invalid_argument(
          "bf16 convolutions need a CPU with AVX512_BF16 or AMX-BF16; this one has neither");
  }

  void forward(const Tensor& src, const Tensor& dst, Layout src_layout,
               Layout dst_layout) override {
    const Shape5 ss = logical_shape(src, src_layout), ds = logical_shape(dst, dst_layout);
    if (ss[1] != s_.in_channels || ds[1] != s_.out_channels || ds[0] != ss[0])
      throw std::invalid_argument("conv: channel/batch mismatch " + to_string(ss) + " -> " +
                                  to_string(ds));
    for (int a = 2; a < 5; ++a)
      if (ds[a] != conv_output_extent(s_, ss[a], a - 2))
        throw std::invalid_argument("conv: output extent mismatch " + to_string(ss) + " -> " +
                                    to_string(ds));
    Plan& p = plan_for(ss, ds, src_layout, dst_layout);
    auto& eng = cpu_engine();
    dnnl::stream strm(eng);
    memory user_src(p.user_src_md, eng, const_cast<float*>(src.data()));
    memory user_dst(p.user_dst_md, eng, dst.data());
    memory src_m = user_src, dst_m = user_dst;
    if (p.pd_src_md != p.user_src_md) {
      src_m = memory(p.pd_src_md, eng);
      dnnl::reorder(user_src, src_m).execute(strm, user_src, src_m);
      LaunchLog::record_library("onednn::reorder");
    }
    if (p.pd_dst_md != p.user_dst_md) dst_m = memory(p.pd_dst_md, eng);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, dst_m}};
    if (s_.has_bias) args.insert({DNNL_ARG_BIAS, p.bias});
    p.prim.execute(strm, args);
    LaunchLog::record_library("onednn::convolution");
    if (dst_m != user_dst) {
      dnnl::reorder(dst_m, user_dst).execute(strm, dst_m, user_dst);
      LaunchLog::record_library("onednn::reorder");
    }
    strm.wait();
  }

 private:
  struct Plan {
    dnnl::primitive prim;
    memory::desc user_src_md, user_dst_md, pd_src_md, pd_dst_md;
    memory weights, bias;
  };

  Plan& plan_for(const Shape5& ss, const Shape5& ds, Layout sl, Layout dl) {
    const auto key = std::make_tuple(ss, sl, dl);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto& eng = cpu_engine();
    const memory::dims src_dims{ss[0], ss[1], ss[2], ss[3], ss[4]};
    const memory::dims dst_dims{ds[0], ds[1], ds[2], ds[3], ds[4]};
    const memory::dims w_dims{s_.out_channels, s_.in_channels, s_.kernel, s_.kernel, s_.kernel};
    const memory::dims strides{s_.stride, s_.stride, s_.stride};
    const memory::dims pad{conv_padding(s_, 0), conv_padding(s_, 1), conv_padding(s_, 2)};
    const dt in_type = bf16_ ? dt::bf16 : dt::f32;  // src and weights; dst stays f32
    memory::desc src_any(src_dims, in_type, tag::any), dst_any(dst_dims, dt::f32, tag::any);
    memory::desc w_any(w_dims, in_type, tag::any), b_md({s_.out_channels}, dt::f32, tag::x);

    dnnl::primitive_attr attr;
    if (s_.activation != Activation::None) {
      dnnl::post_ops ops;
      const float alpha = s_.activation == Activation::LeakyReLU ? s_.slope : 0.f;
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, alpha, 0.f);
      attr.set_post_ops(ops);
    }
    Plan p;
    memory::desc pd_w_md;
    if (!s_.transposed) {
      auto d = s_.has_bias
                   ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::convolution_direct, src_any,
                                                     w_any, b_md, dst_any, strides, pad, pad)
                   : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::convolution_direct, src_any,
                                                     w_any, dst_any, strides, pad, pad);
      dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
      p.prim = dnnl::convolution_forward(pd);
      p.pd_src_md = pd.src_desc();
      p.pd_dst_md = pd.dst_desc();
      pd_w_md = pd.weights_desc();
    } else {
      auto d = s_.has_bias
                   ? dnnl::deconvolution_forward::desc(
                         dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                         src_any, w_any, b_md, dst_any, strides, pad, pad)
                   : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::deconvolution_direct,
                                                       src_any, w_any, dst_any, strides, pad, pad);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, eng);
      p.prim = dnnl::deconvolution_forward(pd);
      p.pd_src_md = pd.src_desc();
      p.pd_dst_md = pd.dst_desc();
      pd_w_md = pd.weights_desc();
    }
    auto user_tag = [](Layout l) { return l == Layout::ChannelsFirst ? tag::ncdhw : tag::ndhwc; };
    p.user_src_md = memory::desc(src_dims, dt::f32, user_tag(sl));
    p.user_dst_md = memory::desc(dst_dims, dt::f32, user_tag(dl));
    // Weights are reordered into the primitive's format once per plan.
    dnnl::stream strm(eng);
    memory user_w(memory::desc(w_dims, dt::f32, tag::oidhw), eng, w_.data());
    p.weights = memory(pd_w_md, eng);
    dnnl::reorder(user_w, p.weights).execute(strm, user_w, p.weights);
    if (s_.has_bias) {
      p.bias = memory(b_md, eng);
      std::copy(b_.begin(), b_.end(), static_cast<float*>(p.bias.get_data_handle()));
    }
    strm.wait();
    return plans_.emplace(key, std::move(p)).first->second;
  }

  ConvSpec s_;
  bool bf16_ = s_.bf16;
  std::vector<float> w_, b_;
  std::map<std::tuple<Shape5, Layout, Layout>, Plan> plans_;
};

}  // namespace

std::unique_ptr<ConvPrimitive> ConvPrimitives<Host>::make(const ConvSpec& spec,
                                                          const std::vector<float>& weights,
                                                          const std::vector<float>& bias) {
  return std::make_unique<OnednnConv>(spec, weights, bias);
}

void set_conv_threads(int n) { omp_set_num_threads(n < 1 ? 1 : n); }

}  // namespace ufno::backend
