/* Makers of frozen, slotted dataclass instances (maker.c). */
#ifndef BM_MAKER_H
#define BM_MAKER_H

#include "buffer.h"

/* Maker(cls, fields: tuple[str, ...], factories: tuple[tuple[str, callable], ...]) -> a callable that takes
 * one value per name of `fields` (positionally, in that order), calls each factory for its name, and
 * returns a new cls instance with those values in its slots. */
extern PyTypeObject bm_MakerType;

#endif
