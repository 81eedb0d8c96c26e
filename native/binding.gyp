{
  # The native addon of Lookout's frame hot paths (node-addon-api, C++17). Built from source by
  # `npm install` through native/scripts/build.mjs; `npm run native:prebuild` puts a copy in
  # native/prebuilds/<platform>-<arch>/ for a device image. With SNPE_ROOT (or QNN_SDK_ROOT) naming the vendor SDK
  # the on-chip binding is compiled in too (the addon then exports `snpe`).
  "variables": {
    # The vendor SDK (SNPE, or the QAIRT SDK that carries it as QNN_SDK_ROOT) and its libSNPE.so folder
    # for the target (default: the QCS8550's Linux build; SNPE_LIB_DIR names another).
    "snpe_root%": "<!(node -p \"process.env.SNPE_ROOT || process.env.QNN_SDK_ROOT || ''\")",
    "snpe_lib_dir%": "<!(node -p \"process.env.SNPE_LIB_DIR || ((process.env.SNPE_ROOT || process.env.QNN_SDK_ROOT) ? (process.env.SNPE_ROOT || process.env.QNN_SDK_ROOT) + '/lib/aarch64-oe-linux-gcc11.2' : '')\")"
  },
  "targets": [
    {
      "target_name": "lookout_native",
      "sources": [
        "src/kernels/resize_taps.cc",
        "src/kernels/resample.cc",
        "src/kernels/detr_decode.cc",
        "src/kernels/iou_matrix.cc",
        "src/kernels/annexb_count.cc",
        "src/binding/addon.cc",
        "src/binding/resampler.cc",
        "src/binding/detr_decoder.cc",
        "src/binding/iou_matrix.cc",
        "src/binding/annexb_count.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++1y", "-std=gnu++20", "-O2", "-O0"],
      # -O3 lets the compiler vectorize the row loops; -ffp-contract=off keeps a*b+c from becoming an
      # FMA (aarch64 has them), so the double-precision kernels round exactly as the TypeScript twins.
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-ffp-contract=off", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3", "-ffp-contract=off"]
      },
      "conditions": [
        [
          "snpe_root != ''",
          {
            "sources": ["src/snpe/snpe_session.cc", "src/snpe/snpe_binding.cc"],
            "defines": ["LOOKOUT_WITH_SNPE"],
            "include_dirs": ["<(snpe_root)/include/SNPE"],
            "libraries": ["-L<(snpe_lib_dir)", "-lSNPE", "-Wl,-rpath,<(snpe_lib_dir)"]
          }
        ]
      ]
    }
  ]
}
