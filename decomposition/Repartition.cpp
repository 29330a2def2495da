#include "decomposition/Repartition.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

#include <stdexcept>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support
#endif

namespace ufno::dist {

namespace {

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace

ExchangeMemory exchange_memory() {
  if constexpr (kHostTensors) return ExchangeMemory::Host;
  return mpi_is_cuda_aware() ? ExchangeMemory::Device : ExchangeMemory::HostStaged;
}

std::string describe(ExchangeMemory m) {
  switch (m) {
    case ExchangeMemory::Host:
      return "host memory";
    case ExchangeMemory::Device:
      return "GPU memory (CUDA-aware MPI)";
    default:
      return "host-staged (MPI not CUDA-aware)";
  }
}

ExchangeAlgorithm parse_exchange_algorithm(const std::string& s) {
  if (s == "alltoallv") return ExchangeAlgorithm::Alltoallv;
  if (s == "p2p") return ExchangeAlgorithm::PointToPoint;
  throw std::invalid_argument("unknown exchange algorithm \"" + s + "\" (alltoallv or p2p)");
}

template <class T, std::size_t D>
Repartition<T, D>::Repartition(MPI_Comm comm, Layout in, Layout out, ExchangeAlgorithm alg)
    : comm_(comm),
      in_(std::move(in)),
      out_(std::move(out)),
      alg_(alg),
      host_staged_(exchange_memory() == ExchangeMemory::HostStaged) {
  int size = 1;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size);
  if (in_.ranks() != size || out_.ranks() != size)
    throw std::invalid_argument("Repartition: layouts are for " + std::to_string(in_.ranks()) +
                                "/" + std::to_string(out_.ranks()) +
                                " ranks, the communicator has " + std::to_string(size));
  if (in_.global() != out_.global())
    throw std::invalid_argument("Repartition: layouts of different global grids");
  const Box<D> mine_in = in_.box(rank_), mine_out = out_.box(rank_);
  // Source boxes must partition the domain so every cell has exactly one sender.
  if (!in_.is_partition())
    throw std::invalid_argument("Repartition: source layout is not a partition");
  // Data a rank keeps is copied directly; only the parts for other ranks go through buffers.
  self_ = mine_in.intersect(mine_out);
  long covered = self_.count();
  for (int r = 0; r < size; ++r) {
    if (r == rank_) continue;
    const Box<D> s = mine_in.intersect(out_.box(r));
    if (!s.empty()) {
      sends_.push_back({r, s, send_cells_});
      send_cells_ += s.count();
      cells_sent_ += s.count();
    }
    const Box<D> q = in_.box(r).intersect(mine_out);
    if (!q.empty()) {
      recvs_.push_back({r, q, recv_cells_});
      recv_cells_ += q.count();
      covered += q.count();
    }
  }
  int local_remote = !sends_.empty() || !recvs_.empty(), any_remote = 0;
  MPI_Allreduce(&local_remote, &any_remote, 1, MPI_INT, MPI_LOR, comm);
  exchange_ = any_remote != 0;
  identity_ = !exchange_ && mine_in == mine_out;
  needs_zero_fill_ = covered != mine_out.count();
}

namespace {

constexpr int kTag = 7301;

// Where the cells of a part (a box of global indices) lie in a flat buffer of nl (B, C) slices:
// cell (l, i_0 .. i_{D-1}) of the part is at base + l * lead + sum_a i_a * stride[a], and the
// last axis is contiguous (stride 1) in blocks and in packed buffers alike.
template <std::size_t D>
struct Walk {
  long base = 0, lead = 0;
  std::array<long, D> stride{};
};

// The part inside a local block whose box is `block`.
template <std::size_t D>
Walk<D> block_walk(const Box<D>& block, const Box<D>& part) {
  Walk<D> w;
  long s = 1;
  for (std::size_t a = D; a-- > 0;) {
    w.stride[a] = s;
    w.base += long(part.lo[a] - block.lo[a]) * s;
    s *= block.extent(a);
  }
  w.lead = s;
  return w;
}

// The part packed alone, (nl, part extents), from offset `base`.
template <std::size_t D>
Walk<D> packed_walk(long base, const Box<D>& part) {
  Walk<D> w = block_walk(part, part);
  w.base = base;
  return w;
}

// dst[dw] = src[sw] over the nl x part cells: one kernel index per row of the last axis.
template <class T, std::size_t D>
void copy_cells(const T* src, const Walk<D>& sw, T* dst, const Walk<D>& dw, long nl,
                const Box<D>& part, const char* label) {
  const auto e = part.extents();
  long rows = nl;
  for (std::size_t a = 0; a + 1 < D; ++a) rows *= e[a];
  ufno::parallel_runs(
      label, rows, e[D - 1], KOKKOS_LAMBDA(const int64_t r, int64_t k0, int64_t k1) {
        long rest = r, s = sw.base, d = dw.base;
        for (std::size_t a = D - 1; a-- > 0;) {
          const long i = rest % e[a];
          rest /= e[a];
          s += i * sw.stride[a];
          d += i * dw.stride[a];
        }
        s += rest * sw.lead;
        d += rest * dw.lead;
        for (int64_t k = k0; k < k1; ++k) dst[d + k] = src[s + k];
      });
}

}  // namespace

template <class T, std::size_t D>
typename Repartition<T, D>::View Repartition<T, D>::apply(const View& in) const {
  // Nothing moves anywhere and this rank's box is unchanged: the tensor is its own result.
  if (identity_ && grid_extents<D>(in) == in_.box(rank_).extents()) return in;
  // apply() zero-fills what no source covers; everything else it writes.
  View out = temporary_grid_view<D, T>("repartition.out", in.extent(0), in.extent(1),
                                       out_.box(rank_).extents());
  apply(in, out);
  return out;
}

template <class T, std::size_t D>
void Repartition<T, D>::apply(const View& in, const View& out) const {
  const Box<D>&bi = in_.box(rank_), &bo = out_.box(rank_);
  if (grid_extents<D>(in) != bi.extents() || grid_extents<D>(out) != bo.extents() ||
      in.extent(0) != out.extent(0) || in.extent(1) != out.extent(1))
    throw std::invalid_argument("Repartition: local tensors do not match the boxes " + bi.str() +
                                " -> " + bo.str());
  const long nl = long(in.extent(0)) * in.extent(1);
  if (needs_zero_fill_) zero_fill(out);
  if (!self_.empty())
    copy_cells(in.data(), block_walk(bi, self_), out.data(), block_walk(bo, self_), nl, self_,
               "ufno::repartition_copy");
  if (exchange_) exchange(in, out, nl);
  // No fence: whatever reads `out` next is a kernel or library call on the same stream, a
  // deep_copy (which fences) or another exchange, which fences before MPI reads device memory.
}

template <class T, std::size_t D>
void Repartition<T, D>::exchange(const View& in, const View& out, long nl) const {
  const Box<D>&bi = in_.box(rank_), &bo = out_.box(rank_);
  // Packed in full by the sends' overlaps and received in full: no zero-fill.
  using Buffer = Kokkos::View<T*, DeviceSpace>;
  Buffer sbuf = temporary<Buffer>("repartition.send", nl * send_cells_);
  Buffer rbuf = temporary<Buffer>("repartition.recv", nl * recv_cells_);
  for (const Peer& p : sends_)
    copy_cells(in.data(), block_walk(bi, p.overlap), sbuf.data(),
               packed_walk(nl * p.offset, p.overlap), nl, p.overlap, "ufno::repartition_pack");
  Kokkos::fence();
  if (host_staged_) {
    // GPU tensors, an MPI that cannot read GPU memory: through host copies of the buffers.
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sbuf);
    auto hr = Kokkos::create_mirror_view(Kokkos::HostSpace(), rbuf);
    transfer(hs.data(), hr.data(), nl);
    Kokkos::deep_copy(rbuf, hr);
  } else {
    transfer(sbuf.data(), rbuf.data(), nl);
  }
  for (const Peer& p : recvs_)
    copy_cells(static_cast<const T*>(rbuf.data()), packed_walk(nl * p.offset, p.overlap),
               out.data(), block_walk(bo, p.overlap), nl, p.overlap, "ufno::repartition_unpack");
}

template <class T, std::size_t D>
void Repartition<T, D>::transfer(const T* send, T* recv, long nl) const {
  constexpr int words = sizeof(T) / sizeof(float);  // exchanged as MPI_FLOAT
  const int size = in_.ranks();
  float* sf = const_cast<float*>(reinterpret_cast<const float*>(send));
  float* rf = reinterpret_cast<float*>(recv);
  if (alg_ == ExchangeAlgorithm::Alltoallv) {
    std::vector<int> sc(size, 0), sd(size, 0), rc(size, 0), rd(size, 0);
    for (const Peer& p : sends_) {
      sc[p.rank] = int(nl * p.overlap.count() * words);
      sd[p.rank] = int(nl * p.offset * words);
    }
    for (const Peer& p : recvs_) {
      rc[p.rank] = int(nl * p.overlap.count() * words);
      rd[p.rank] = int(nl * p.offset * words);
    }
    MPI_Alltoallv(sf, sc.data(), sd.data(), MPI_FLOAT, rf, rc.data(), rd.data(), MPI_FLOAT, comm_);
    return;
  }
  std::vector<MPI_Request> req;
  for (const Peer& p : recvs_) {
    req.emplace_back();
    MPI_Irecv(rf + nl * p.offset * words, int(nl * p.overlap.count() * words), MPI_FLOAT, p.rank,
              kTag, comm_, &req.back());
  }
  for (const Peer& p : sends_) {
    req.emplace_back();
    MPI_Isend(sf + nl * p.offset * words, int(nl * p.overlap.count() * words), MPI_FLOAT, p.rank,
              kTag, comm_, &req.back());
  }
  MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
}

template class Repartition<float, 3>;
template class Repartition<complexf, 3>;
template class Repartition<float, 4>;
template class Repartition<complexf, 4>;

}  // namespace ufno::dist
