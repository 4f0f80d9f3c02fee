/* SPDX-License-Identifier: BSD-3-Clause */
/* str.c - text helpers (sl_str.h). */
#include <ctype.h>
#include <string.h>

#include "sl_str.h"

char *
sl_str_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}
