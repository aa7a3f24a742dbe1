// tune_check MODEL.onnx TESSERA: an application of the installed tessera::tune measures node relu1
// of MODEL on the out-of-tree `template` plugin in a worker started from the command the
// application gives ({TESSERA, "tune", "--worker"}), and checks that a missing worker program is
// an error naming it. Exit 0 only if the measurement is ok (checked against the reference kernel
// by the worker) and the error names the program.
#include <cstdio>
#include <string>

#include "tessera/error.hpp"
#include "tessera/tuner.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tune_check MODEL.onnx TESSERA\n");
    return 2;
  }
  namespace tune = tessera::tune;
  tune::MeasureRequest request;
  request.model = argv[1];
  request.node = "relu1";
  request.target = "template";
  request.repeats = 2;
  const tune::MeasureResult result = tune::measure({argv[2], "tune", "--worker"}, request);
  std::printf("relu1 on template: %s %.1f us %s\n", result.status.c_str(), result.median_us,
              result.error.c_str());
  if (result.status != "ok") return 1;
  try {
    tune::check_worker_command({"/nonexistent/worker"});
    std::fprintf(stderr, "FAIL: a missing worker program was accepted\n");
    return 1;
  } catch (const tessera::Error& e) {
    if (std::string(e.what()).find("'/nonexistent/worker' does not exist") == std::string::npos) {
      std::fprintf(stderr, "FAIL: the error does not name the program: %s\n", e.what());
      return 1;
    }
  }
  std::printf("tune_check OK\n");
  return 0;
}
