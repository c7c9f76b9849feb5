# GPU options at the command line: validated on every build, ignored (and said so) on a host run.
function(beatnik_cli_test name regex)
  add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 1 $<TARGET_FILE:beatnik> ${ARGN})
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}" LABELS unit TIMEOUT 60)
  beatnik_test_environment(${name})
endfunction()
beatnik_cli_test(cli.gpu_transport_unknown "unknown --gpu-transport 'fast'" --gpu-transport fast)
beatnik_cli_test(cli.gpu_id_negative "--gpu-id must be a GPU number" -x cuda --gpu-id -1)
beatnik_cli_test(cli.gpu_options_ignored_on_host "ignored on a host run"
                 -n 16 -t 1 --fftw-plan estimate --progress-every 0 --gpu-transport nccl --gpu-id 0)
# docs/gpu-small.md: --gpu-timers and --fft-2d (the 2-D plan also runs on the host when asked for).
beatnik_cli_test(cli.gpu_timers_unknown "unknown --gpu-timers 'fast'" --gpu-timers fast)
beatnik_cli_test(cli.fft_2d_unknown "unknown --fft-2d 'yes'" --fft-2d yes)
beatnik_cli_test(cli.gpu_timers_ignored_on_host "--gpu-timers is ignored on a host run"
                 -n 16 -t 1 --fftw-plan estimate --progress-every 0 --gpu-timers host)
beatnik_cli_test(cli.fft_2d_on_host "local=2d-plan" -n 16 -t 1 --fftw-plan estimate --progress-every 0 --fft-2d on)
# --gpu-graph (docs/gpu-small.md): validated everywhere, ignored on a host run when asked for.
beatnik_cli_test(cli.gpu_graph_unknown "unknown --gpu-graph 'yes'" --gpu-graph yes)
beatnik_cli_test(cli.gpu_graph_ignored_on_host "--gpu-graph is ignored on a host run"
                 -n 16 -t 1 --fftw-plan estimate --progress-every 0 --gpu-graph on)
if(NOT BEATNIK_ENABLE_CUDA)
  beatnik_cli_test(cli.cuda_not_built "built without the CUDA backend" -x cuda -n 16 -t 1)
endif()
