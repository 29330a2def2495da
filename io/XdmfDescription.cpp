#include "io/XdmfDescription.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/InputError.hpp"
#include "io/Temporaries.hpp"

namespace ufno {

namespace fs = std::filesystem;

namespace {

std::string dims(const std::vector<std::size_t>& v) {
  std::ostringstream s;
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? " " : "") << v[i];
  return s.str();
}

bool whole(const XdmfSlice& s) {
  return s.start == std::vector<std::size_t>(s.shape.size(), 0) && s.count == s.shape;
}

// A dataset of the file, or a hyperslab of it (XDMF's start / stride / count rows) shaped as
// `values` (the grid's cells or nodes): XDMF 2 readers (ParaView's "XDMF Reader") size a
// hyperslab's result by its Dimensions and want the grid's axes there.
void data_item(std::ostream& o, const XdmfSlice& s, const std::vector<std::size_t>& values,
               const std::string& h5, const std::string& pad) {
  const std::string item = "<DataItem Dimensions=\"" + dims(s.shape) +
                           "\" NumberType=\"Float\" Precision=\"" + std::to_string(s.precision) +
                           "\" Format=\"HDF\">" + h5 + ":/" + s.dataset + "</DataItem>";
  if (whole(s)) {
    o << pad << item << "\n";
    return;
  }
  const std::size_t rank = s.shape.size();
  o << pad << "<DataItem ItemType=\"HyperSlab\" Dimensions=\"" << dims(values)
    << "\" Type=\"HyperSlab\">\n";
  o << pad << "  <DataItem Dimensions=\"3 " << rank << "\" Format=\"XML\">" << dims(s.start) << " "
    << dims(std::vector<std::size_t>(rank, 1)) << " " << dims(s.count) << "</DataItem>\n";
  o << pad << "  " << item << "\n";
  o << pad << "</DataItem>\n";
}

void grid(std::ostream& o, const XdmfGrid& g, const std::string& h5) {
  const std::string nodes = dims({g.nodes[0], g.nodes[1], g.nodes[2]});
  o << "      <Grid Name=\"" << g.name << "\" GridType=\"Uniform\">\n";
  o << "        <Topology TopologyType=\"3DSMesh\" Dimensions=\"" << nodes << "\"/>\n";
  o << "        <Geometry GeometryType=\"X_Y_Z\">\n";
  const std::vector<std::size_t> node_dims{g.nodes[0], g.nodes[1], g.nodes[2]};
  std::vector<std::size_t> cell_dims;
  for (std::size_t n : g.nodes) cell_dims.push_back(n > 1 ? n - 1 : 1);
  for (const auto& c : g.xyz) data_item(o, c, node_dims, h5, "          ");
  o << "        </Geometry>\n";
  for (const auto& f : g.fields) {
    o << "        <Attribute Name=\"" << f.name << "\" AttributeType=\"Scalar\" Center=\""
      << (g.cell_data ? "Cell" : "Node") << "\">\n";
    data_item(o, f.values, g.cell_data ? cell_dims : node_dims, h5, "          ");
    o << "        </Attribute>\n";
  }
  o << "      </Grid>\n";
}

}  // namespace

std::string xdmf_path(const std::string& h5_path) {
  return fs::path(h5_path).replace_extension(".xmf").string();
}

std::string xdmf_document(const std::string& h5, const std::vector<XdmfStep>& steps) {
  std::ostringstream o;
  o.precision(12);  // report times are days with a few decimals
  o << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n";
  o << "  <Grid Name=\"prediction\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& s : steps) {
    o << "    <Grid Name=\"t = " << s.time_days
      << " days\" GridType=\"Collection\" CollectionType=\"Spatial\">\n";
    o << "      <Time Value=\"" << s.time_days << "\"/>\n";
    for (const auto& g : s.grids) grid(o, g, h5);
    o << "    </Grid>\n";
  }
  o << "  </Grid>\n  </Domain>\n</Xdmf>\n";
  return o.str();
}

void write_xdmf(const std::string& h5_path, const std::vector<XdmfStep>& steps) {
  const std::string path = xdmf_path(h5_path);
  const std::string tmp = temporary_name(path, long(::getpid()));
  const std::string text = xdmf_document(fs::path(h5_path).filename().string(), steps);
  {
    std::ofstream f(tmp);
    f << text;
    if (!(f << std::flush)) {
      std::remove(tmp.c_str());
      throw InputError(path, "",
                       "could not be written (the viewer description of " + h5_path + ")");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path, "", "could not be created (renaming its complete temporary failed)");
  }
}

}  // namespace ufno
