#include "high/high.h"  // upward: low does not depend on high
