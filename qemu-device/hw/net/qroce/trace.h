#include "trace/trace-hw_net_qroce.h"
