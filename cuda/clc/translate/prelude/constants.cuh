// Constants of OpenCL C (float.h, limits.h and the M_* math constants).
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.192092896e-07F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef INT_MIN
#define INT_MIN (-2147483647 - 1)
#endif
#ifndef UINT_MAX
#define UINT_MAX 0xffffffffu
#endif
#ifndef LONG_MAX
#define LONG_MAX 0x7fffffffffffffffL
#endif
#ifndef LONG_MIN
#define LONG_MIN (-0x7fffffffffffffffL - 1)
#endif
#ifndef ULONG_MAX
#define ULONG_MAX 0xffffffffffffffffUL
#endif
#define MAXFLOAT FLT_MAX
#define FP_ILOGB0 INT_MIN
#define FP_ILOGBNAN INT_MAX
#ifndef INFINITY
#define INFINITY PRISM_INFINITY_F
#endif
#ifndef NAN
#define NAN PRISM_NAN_F
#endif
#define HUGE_VALF PRISM_INFINITY_F
#define M_E_F 2.718281828f
#define M_LOG2E_F 1.442695041f
#define M_LN2_F 0.693147181f
#define M_LN10_F 2.302585093f
#define M_PI_F 3.141592654f
#define M_PI_2_F 1.570796327f
#define M_1_PI_F 0.318309886f
#define M_SQRT2_F 1.414213562f
#ifndef M_PI
#define M_E 2.718281828459045090796
#define M_LOG2E 1.442695040888963387005
#define M_LN2 0.693147180559945286227
#define M_LN10 2.302585092994045901094
#define M_PI 3.141592653589793115998
#define M_PI_2 1.570796326794896557999
#define M_1_PI 0.318309886183790691216
#define M_SQRT2 1.414213562373095145475
#endif

