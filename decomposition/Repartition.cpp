#include "decomposition/Repartition.hpp"
#include "core/Parallel.hpp"

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

template <class T>
Repartition<T>::Repartition(MPI_Comm comm, PencilLayout in, PencilLayout out, ExchangeAlgorithm alg)
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
  const Box3 mine_in = in_.box(rank_), mine_out = out_.box(rank_);
  // Source boxes must partition the domain so every cell has exactly one sender.
  if (!in_.is_partition())
    throw std::invalid_argument("Repartition: source layout is not a partition");
  // Data a rank keeps is copied directly; only the parts for other ranks go through buffers.
  self_ = mine_in.intersect(mine_out);
  long covered = self_.count();
  for (int r = 0; r < size; ++r) {
    if (r == rank_) continue;
    const Box3 s = mine_in.intersect(out_.box(r));
    if (!s.empty()) {
      sends_.push_back({r, s, send_cells_});
      send_cells_ += s.count();
      cells_sent_ += s.count();
    }
    const Box3 q = in_.box(r).intersect(mine_out);
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

// Copies the part `part` (global indices) of the local block `src` (whose box is `src_box`) into
// buf[base ...] laid out as (B*C, part extents).
template <class View, class Buf>
void pack(const View& src, const Box3& src_box, const Box3& part, const Buf& buf, long base) {
  const int nc = src.extent(1), nl = src.extent(0) * src.extent(1);
  const int ex = part.extent(0), ey = part.extent(1), et = part.extent(2);
  const int ox = part.lo[0] - src_box.lo[0], oy = part.lo[1] - src_box.lo[1],
            ot = part.lo[2] - src_box.lo[2];
  ufno::parallel_for(
      "ufno::repartition_pack",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>>({0, 0, 0, 0}, {nl, ex, ey, et}),
      KOKKOS_LAMBDA(int l, int i, int j, int k) {
        buf(base + ((long(l) * ex + i) * ey + j) * et + k) =
            src(l / nc, l % nc, ox + i, oy + j, ot + k);
      });
}

template <class View, class Buf>
void unpack(const Buf& buf, long base, const Box3& part, const View& dst, const Box3& dst_box) {
  const int nc = dst.extent(1), nl = dst.extent(0) * dst.extent(1);
  const int ex = part.extent(0), ey = part.extent(1), et = part.extent(2);
  const int ox = part.lo[0] - dst_box.lo[0], oy = part.lo[1] - dst_box.lo[1],
            ot = part.lo[2] - dst_box.lo[2];
  ufno::parallel_for(
      "ufno::repartition_unpack",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>>({0, 0, 0, 0}, {nl, ex, ey, et}),
      KOKKOS_LAMBDA(int l, int i, int j, int k) {
        dst(l / nc, l % nc, ox + i, oy + j, ot + k) =
            buf(base + ((long(l) * ex + i) * ey + j) * et + k);
      });
}

// dst (box dst_box) takes the cells `part` of src (box src_box).
template <class View>
void copy_part(const View& src, const Box3& src_box, const Box3& part, const View& dst,
               const Box3& dst_box) {
  const int nc = src.extent(1), nl = src.extent(0) * src.extent(1);
  const int ex = part.extent(0), ey = part.extent(1), et = part.extent(2);
  const int sx = part.lo[0] - src_box.lo[0], sy = part.lo[1] - src_box.lo[1],
            st = part.lo[2] - src_box.lo[2];
  const int dx = part.lo[0] - dst_box.lo[0], dy = part.lo[1] - dst_box.lo[1],
            dt = part.lo[2] - dst_box.lo[2];
  ufno::parallel_for(
      "ufno::repartition_copy",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>>({0, 0, 0, 0}, {nl, ex, ey, et}),
      KOKKOS_LAMBDA(int l, int i, int j, int k) {
        dst(l / nc, l % nc, dx + i, dy + j, dt + k) = src(l / nc, l % nc, sx + i, sy + j, st + k);
      });
}

}  // namespace

template <class T>
typename Repartition<T>::View Repartition<T>::apply(const View& in) const {
  // Nothing moves anywhere and this rank's box is unchanged: the tensor is its own result.
  if (identity_ && in.extent(2) == std::size_t(in_.box(rank_).extent(0)) &&
      in.extent(3) == std::size_t(in_.box(rank_).extent(1)) &&
      in.extent(4) == std::size_t(in_.box(rank_).extent(2)))
    return in;
  const Box3& b = out_.box(rank_);
  // apply() zero-fills what no source covers; everything else it writes.
  View out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "repartition.out"), in.extent(0),
           in.extent(1), b.extent(0), b.extent(1), b.extent(2));
  apply(in, out);
  return out;
}

template <class T>
void Repartition<T>::apply(const View& in, const View& out) const {
  const Box3 &bi = in_.box(rank_), &bo = out_.box(rank_);
  const auto ei = bi.extents(), eo = bo.extents();
  if (in.extent(2) != std::size_t(ei[0]) || in.extent(3) != std::size_t(ei[1]) ||
      in.extent(4) != std::size_t(ei[2]) || out.extent(2) != std::size_t(eo[0]) ||
      out.extent(3) != std::size_t(eo[1]) || out.extent(4) != std::size_t(eo[2]) ||
      in.extent(0) != out.extent(0) || in.extent(1) != out.extent(1))
    throw std::invalid_argument("Repartition: local tensors do not match the boxes " + bi.str() +
                                " -> " + bo.str());
  const long nl = long(in.extent(0)) * in.extent(1);
  if (needs_zero_fill_) Kokkos::deep_copy(out, T());
  if (!self_.empty()) copy_part(in, bi, self_, out, bo);
  if (exchange_) exchange(in, out, nl);
  Kokkos::fence();
}

template <class T>
void Repartition<T>::exchange(const View& in, const View& out, long nl) const {
  const Box3 &bi = in_.box(rank_), &bo = out_.box(rank_);
  Kokkos::View<T*, DeviceSpace> sbuf("repartition.send", nl * send_cells_);
  Kokkos::View<T*, DeviceSpace> rbuf("repartition.recv", nl * recv_cells_);
  for (const Peer& p : sends_) pack(in, bi, p.overlap, sbuf, nl * p.offset);
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
  for (const Peer& p : recvs_) unpack(rbuf, nl * p.offset, p.overlap, out, bo);
}

template <class T>
void Repartition<T>::transfer(const T* send, T* recv, long nl) const {
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

template class Repartition<float>;
template class Repartition<complexf>;

}  // namespace ufno::dist
