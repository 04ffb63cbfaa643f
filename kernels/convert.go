package kernels

import _ "embed"

// ConvertSource is the OpenCL C text of the conversions between float and the storage
// types (convert.cl): prism_half, prism_bfloat16, prism_e4m3 and prism_e5m2 (storage to
// float, exactly), prism_to_half and prism_to_bfloat16 (float to storage, to nearest
// even, with IEEE overflow to Inf and subnormal results), and prism_tf32 (float rounded
// to tf32). Each gives the bits engine's Go conversions give (engine.Half,
// engine.BFloat16, ...). A family whose kernels load or store a storage type builds
// ConvertSource + its source and names the functions in its -D options (gemm.cl's CONV,
// attention.cl's CONV and STORE); the text ends with a #line directive, so that build
// logs number the family's lines from 1.
//
//go:embed convert.cl
var ConvertSource string
