/* Reorder a function body's blocks (words from the first OpLabel on) into reverse postorder. */
#ifndef GPUPROBE_SPIRV_BLOCK_ORDER_H
#define GPUPROBE_SPIRV_BLOCK_ORDER_H

#include "spirv/emit.h"

int spirv_order_blocks(spv_buf *body);

#endif
