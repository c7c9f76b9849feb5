#include "beatnik/fft/fft_options.hpp"

#include "beatnik/base/error.hpp"

namespace beatnik::fft {

std::string FftOptions::describe() const {
  std::string s = std::string("exchange=") + comm::to_string(algorithm);
  s += intermediate == Intermediate::Slab ? " intermediate=slab" : " intermediate=pencil";
  s += reorder ? " reorder=contiguous" : " reorder=strided";
  s += spectrum_in_input_layout ? " spectrum=input-layout" : " spectrum=last-intermediate";
  s += half_spectrum ? " transform=r2c" : " transform=c2c";
  s += std::string(" fftw-plan=") + to_string(effort);
  if (plan_2d) s += " local=2d-plan";
  return s;
}

FftOptions FftOptions::from_reference_code(int h) {
  if (h < 0 || h > 7) throw InputError("-H takes 0..7 (bits: 4 all-to-all, 2 pencils, 1 reorder)");
  FftOptions o;
  o.algorithm = (h & 4) ? comm::ExchangeAlgorithm::Alltoallv : comm::ExchangeAlgorithm::P2P;
  o.intermediate = (h & 2) ? Intermediate::Pencil : Intermediate::Slab;
  o.reorder = (h & 1) != 0;
  return o;
}

std::vector<FftOptions> FftOptions::every_combination(const std::vector<comm::ExchangeAlgorithm>& algorithms,
                                                      PlanEffort effort) {
  std::vector<FftOptions> v;
  for (auto a : algorithms)
    for (auto inter : {Intermediate::Slab, Intermediate::Pencil})
      for (bool reorder : {false, true})
        for (bool spec_in : {false, true}) {
          FftOptions o;
          o.algorithm = a;
          o.intermediate = inter;
          o.reorder = reorder;
          o.spectrum_in_input_layout = spec_in;
          o.effort = effort;
          v.push_back(o);
        }
  return v;
}

}  // namespace beatnik::fft
