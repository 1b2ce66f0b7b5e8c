# layering.cmake — tests that the build enforces docs/architecture.md's
# arrows: layer_probe(NAME LIB HEADER fail|pass) compiles probe.c with
# LIB's include directories and HEADER included; the test layering_NAME
# passes when the compile fails on HEADER not being found (fail) or
# succeeds (pass). The pass probes show the header exists and is reachable
# from a layer allowed to use it, so a fail probe cannot pass by accident.
function(layer_probe name lib header expect)
  add_library(layer_${name} OBJECT EXCLUDE_FROM_ALL ${CMAKE_SOURCE_DIR}/cmake/layering/probe.c)
  target_link_libraries(layer_${name} PRIVATE ${lib})
  target_compile_definitions(layer_${name} PRIVATE LAYER_PROBE_HEADER="${header}")
  add_test(NAME layering_${name}
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DTARGET=layer_${name}
                   -DHEADER=${header} -DEXPECT=${expect} -P ${CMAKE_SOURCE_DIR}/cmake/layering/check.cmake)
  set_tests_properties(layering_${name} PROPERTIES RESOURCE_LOCK servesim_build_tree)
endfunction()
layer_probe(models_no_cluster      models_cost   sim_cluster.h    fail)
layer_probe(models_no_scenario     models_catalog sim_scenario.h  fail)
layer_probe(models_no_loader       models_catalog sim_loader.h    fail)
layer_probe(calib_db_no_models     calib_db      model_cost.h     fail)
layer_probe(kernels_no_calib       kernels_ref   calib_db.h       fail)
layer_probe(harness_no_sim         calib_harness sim_instance.h   fail)
layer_probe(engine_no_config       sim_engine    sim_scenario.h   fail)
layer_probe(instance_no_cluster    sim_instance  sim_cluster.h    fail)
layer_probe(cluster_no_tools       sim_cluster   sim_plot.h       fail)
layer_probe(base_no_engine         sim_base      sim_engine.h     fail)
layer_probe(cli_sees_cluster       sim_cli       sim_cluster.h    pass)
layer_probe(models_sees_calib_db   models_cost   calib_db.h       pass)
layer_probe(instance_sees_models   sim_instance  model_cost.h     pass)
layer_probe(tools_sees_plot        sim_tools     sim_plot.h       pass)
layer_probe(harness_sees_kernels   calib_harness kern_num.h       pass)
layer_probe(models_sees_yaml       models_catalog sim_yaml.h      pass)
