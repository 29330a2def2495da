#pragma once
// Writes case files for tests: a valid case as a list of fields that a test can break one at a
// time (remove, reshape, retype, poison with NaN, relabel units) before writing.
#include <hdf5.h>

#include <cmath>
#include <string>
#include <vector>

namespace ufno::test {

struct CaseField {
  std::string name;
  std::vector<hsize_t> shape;  // empty: scalar
  std::vector<double> values;
  std::string units;
  enum Type { Float64, Int32, String } type = Float64;
};

struct CaseFields {
  std::vector<CaseField> fields;
  CaseField& operator[](const std::string& n) {
    for (auto& f : fields)
      if (f.name == n) return f;
    throw std::out_of_range(n);
  }
  void erase(const std::string& n) {
    for (auto it = fields.begin(); it != fields.end(); ++it)
      if (it->name == n) {
        fields.erase(it);
        return;
      }
  }
};

// A valid nx x ny case: a layered formation with the bottom row inactive, perforated layers 2..3.
inline CaseFields valid_case(int nx, int ny) {
  CaseFields c;
  const hsize_t X = nx, Y = ny;
  std::vector<double> kx(X * Y), kz(X * Y), phi(X * Y);
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y) {
      const bool active = x < nx - 1;
      kx[x * ny + y] = active ? 10.0 + 5.0 * x + 0.5 * y : 0.0;
      kz[x * ny + y] = active ? 0.2 * kx[x * ny + y] : 0.0;
      phi[x * ny + y] = active ? 0.1 + 0.01 * x : 0.0;
    }
  std::vector<double> dr(Y), dz(X, 2.0), perf(X, 0.0);
  for (int y = 0; y < ny; ++y) dr[y] = 3.5938 * std::pow(1.035012, y);
  perf[1] = perf[2] = 1.0;
  c.fields = {{"PERMX", {X, Y}, kx, "mD"},
              {"PERMZ", {X, Y}, kz, "mD"},
              {"PORO", {X, Y}, phi, "1"},
              {"DR", {Y}, dr, "m"},
              {"DZ", {X}, dz, "m"},
              {"PERF", {X}, perf, "1"},
              {"INJ_RATE", {}, {1.0}, "Mt/yr"},
              {"TEMP", {}, {80.0}, "degC"},
              {"PRESSURE", {}, {200.0}, "bar"},
              {"SWI", {}, {0.2}, "1"},
              {"VG_LAMBDA", {}, {0.5}, "1"}};
  return c;
}

inline void write_units(hid_t obj, const std::string& units) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, units.size() + 1);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, "units", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, units.c_str());
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

inline void write_case(const std::string& path, const CaseFields& c) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  for (const auto& fld : c.fields) {
    hid_t sp = fld.shape.empty()
                   ? H5Screate(H5S_SCALAR)
                   : H5Screate_simple(int(fld.shape.size()), fld.shape.data(), nullptr);
    hid_t d;
    if (fld.type == CaseField::String) {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, 8);
      hid_t s1 = H5Screate(H5S_SCALAR);
      d = H5Dcreate2(f, fld.name.c_str(), t, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, "garbage");
      H5Sclose(s1);
      H5Tclose(t);
    } else if (fld.type == CaseField::Int32) {
      std::vector<int> iv(fld.values.begin(), fld.values.end());
      d = H5Dcreate2(f, fld.name.c_str(), H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, iv.data());
    } else {
      d = H5Dcreate2(f, fld.name.c_str(), H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                     H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, fld.values.data());
    }
    if (!fld.units.empty()) write_units(d, fld.units);
    H5Dclose(d);
    H5Sclose(sp);
  }
  H5Fclose(f);
}

}  // namespace ufno::test
