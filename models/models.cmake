# models.cmake — embeds the GPU and model catalogue (models/gpus/*.yaml,
# models/archs/*.yaml) and the model zoo (models/hf/*.json.gz, kept
# compressed) into servesim_core as a generated C file, regenerated whenever
# one of them changes or is added (CONFIGURE_DEPENDS re-globs).
file(GLOB MODEL_CATALOG_YAML CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/models/gpus/*.yaml ${CMAKE_SOURCE_DIR}/models/archs/*.yaml
     ${CMAKE_SOURCE_DIR}/models/hf/*.json.gz)
set(MODEL_CATALOG_C ${CMAKE_BINARY_DIR}/generated/model_catalog_data.c)
add_custom_command(
  OUTPUT ${MODEL_CATALOG_C}
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR}/models -DOUT=${MODEL_CATALOG_C}
          -P ${CMAKE_SOURCE_DIR}/models/model_embed.cmake
  DEPENDS ${MODEL_CATALOG_YAML} ${CMAKE_SOURCE_DIR}/models/model_embed.cmake
  COMMENT "Embedding the model/GPU catalogue"
  VERBATIM)
target_sources(servesim_core PRIVATE ${MODEL_CATALOG_C})
