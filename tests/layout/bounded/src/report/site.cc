#include "drill/drill.h"  // allowed by the DEPS above, but report may depend on evidence and core only
