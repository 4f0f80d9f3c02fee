/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_str.h - small text helpers for the configuration readers (sluiced's INI, the simulator's
 * scenarios). Control path only.
 */
#ifndef SL_STR_H
#define SL_STR_H

/* Strip leading and trailing white space in place; returns the first kept character. */
char *sl_str_trim(char *s);

#endif /* SL_STR_H */
