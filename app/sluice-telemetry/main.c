/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice-telemetry: one DPDK telemetry query to a running sluiced, printed as JSON.
 *
 * sluiced answers on DPDK's telemetry socket (SOCK_SEQPACKET,
 * <runtime dir>/dpdk/<file prefix>/dpdk_telemetry.v2): the daemon sends a greeting object
 * that names its largest reply (max_output_len, bytes), the client sends one command
 * ("/sluice/ports", "/sluice/qp,3"), the daemon answers {"<command>": <data>}, where
 * <command> is the text before the first comma. This tool prints <data>, or with KEY the
 * member KEY of an object <data>: a string without its quotes, anything else as the JSON
 * text the daemon sent.
 *
 * It is a C program rather than a script because scripts poll with it: the integration tests
 * wait on counts through it, tens of queries a test, beside two busy-polling daemons on two
 * cores. A Python interpreter takes about 0.4 s of a core to start on those machines; this
 * takes about a millisecond, and the daemons keep their cores.
 *
 * The JSON reading below walks only what it needs: the top-level object of the reply and of
 * the greeting, one member deep. Member names are compared as written (sluiced's names have
 * no escapes). A reply it cannot walk is an error, not a guess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define TEL_GREETING_BYTES 4096
#define TEL_TIMEOUT_S 2

static const char usage[] =
	"sluice-telemetry: one DPDK telemetry query to a running sluiced, printed as JSON.\n"
	"\n"
	"usage: sluice-telemetry FILE_PREFIX COMMAND [KEY]\n"
	"  FILE_PREFIX  the daemon's EAL --file-prefix\n"
	"  COMMAND      e.g. /sluice/info, /sluice/ports, /sluice/qp,3\n"
	"  KEY          print only this key of the reply's object (e.g. p0/peer_state); a string\n"
	"               is printed without its quotes\n"
	"Exit status: 0 on a reply, 1 when the daemon is not reachable, its reply cannot be read\n"
	"or has no KEY, 2 on usage errors.\n";

static const char *
skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* p at a string's opening quote: the byte after its closing quote, or NULL. */
static const char *
string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* p at a value: the byte after it, or NULL when it does not end inside [p, end). */
static const char *
value_end(const char *p, const char *end)
{
	unsigned depth = 0;

	if (p >= end)
		return NULL;
	if (*p == '"')
		return string_end(p, end);
	if (*p != '{' && *p != '[') {
		while (p < end && !strchr(",}] \t\r\n", *p))
			p++;
		return p;
	}
	for (; p < end; p++) {
		if (*p == '"') {
			p = string_end(p, end);
			if (p == NULL)
				return NULL;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if ((*p == '}' || *p == ']') && --depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

/* The value of member name[0..name_len) of the object at obj: its first byte, with *value_stop
 * set past its last; NULL when the object has no such member or cannot be walked. */
static const char *
member(const char *obj, const char *end, const char *name, size_t name_len, const char **value_stop)
{
	const char *p = skip_space(obj, end);

	if (p >= end || *p != '{')
		return NULL;
	for (p = skip_space(p + 1, end); p < end && *p == '"'; p = skip_space(p + 1, end)) {
		const char *name_start = p + 1, *name_stop = string_end(p, end), *value;

		if (name_stop == NULL)
			return NULL;
		p = skip_space(name_stop, end);
		if (p >= end || *p != ':')
			return NULL;
		value = skip_space(p + 1, end);
		p = value_end(value, end);
		if (p == NULL)
			return NULL;
		if ((size_t)(name_stop - 1 - name_start) == name_len &&
		    memcmp(name_start, name, name_len) == 0) {
			*value_stop = p;
			return value;
		}
		p = skip_space(p, end);
		if (p >= end || *p != ',')
			return NULL;
	}
	return NULL;
}

/* Print a JSON string's text (p at its opening quote) with the common escapes decoded. */
static void
print_string(const char *p, const char *stop)
{
	for (p++; p < stop - 1; p++) {
		if (*p != '\\') {
			putchar(*p);
			continue;
		}
		p++;
		switch (*p) {
		case 'n':
			putchar('\n');
			break;
		case 't':
			putchar('\t');
			break;
		case 'r':
			putchar('\r');
			break;
		case 'b':
			putchar('\b');
			break;
		case 'f':
			putchar('\f');
			break;
		case 'u':
			fputs("\\u", stdout);
			break; /* left as written: sluiced sends ASCII */
		default:
			putchar(*p);
			break;
		}
	}
	putchar('\n');
}

static int
connect_daemon(const char *prefix)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval timeout = {.tv_sec = TEL_TIMEOUT_S};
	const char *runtime = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	int fd;

	if (runtime == NULL)
		runtime = "/tmp";
	if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/dpdk/%s/dpdk_telemetry.v2",
			     runtime, prefix) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	char greeting[TEL_GREETING_BYTES];
	const char *prefix, *command, *key, *data, *data_stop, *len_stop, *len_text;
	size_t command_len, reply_max;
	ssize_t got;
	char *reply = NULL;
	int fd, rc = 1;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 3 && argc != 4) {
		fputs(usage, stderr);
		return 2;
	}
	prefix = argv[1];
	command = argv[2];
	key = argc == 4 ? argv[3] : NULL;

	fd = connect_daemon(prefix);
	if (fd < 0) {
		fprintf(stderr, "sluice-telemetry: %s: %s\n", prefix, strerror(errno));
		return 1;
	}
	got = recv(fd, greeting, sizeof(greeting), 0);
	len_text =
		got > 0 ? member(greeting, greeting + got, "max_output_len", 14, &len_stop) : NULL;
	reply_max = len_text ? strtoul(len_text, NULL, 10) : 0;
	if (reply_max == 0) {
		fprintf(stderr, "sluice-telemetry: %s: no greeting (%s)\n", prefix,
			got < 0 ? strerror(errno) : "no max_output_len");
		goto out;
	}
	reply = malloc(reply_max + 1);
	if (reply == NULL) {
		fprintf(stderr, "sluice-telemetry: %s: %s\n", prefix, strerror(errno));
		goto out;
	}
	if (send(fd, command, strlen(command), 0) < 0 ||
	    (got = recv(fd, reply, reply_max + 1, 0)) <= 0) {
		fprintf(stderr, "sluice-telemetry: %s: %s\n", prefix,
			got == 0 ? "the daemon closed the connection" : strerror(errno));
		goto out;
	}
	command_len = strcspn(command, ",");
	data = member(reply, reply + got, command, command_len, &data_stop);
	if (data == NULL) {
		fprintf(stderr, "sluice-telemetry: %s: a reply without %.*s: %.*s\n", prefix,
			(int)command_len, command, (int)got, reply);
		goto out;
	}
	if (key != NULL) {
		data = member(data, data_stop, key, strlen(key), &data_stop);
		if (data == NULL) {
			fprintf(stderr, "sluice-telemetry: no key %s in %s\n", key, command);
			goto out;
		}
	}
	if (*data == '"')
		print_string(data, data_stop);
	else
		printf("%.*s\n", (int)(data_stop - data), data);
	rc = 0;
out:
	free(reply);
	close(fd);
	return rc;
}
