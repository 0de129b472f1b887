/*
 * log.h: the library's only voice. Everything goes to stderr, prefixed "infprof:", written with
 * one write(2) so lines from threads do not interleave. Quiet by default: level 1 prints only
 * warnings about something the user should fix (INFPROF_LOG raises or silences it).
 */
#ifndef INFPROF_LOG_H
#define INFPROF_LOG_H

enum { IP_LOG_SILENT = 0, IP_LOG_WARN = 1, IP_LOG_INFO = 2, IP_LOG_DEBUG = 3 };

void ip_log_set_level(int level);
int ip_log_level(void);
void ip_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ip_warn(...)  ip_log(IP_LOG_WARN, __VA_ARGS__)
#define ip_info(...)  ip_log(IP_LOG_INFO, __VA_ARGS__)
#define ip_debug(...) ip_log(IP_LOG_DEBUG, __VA_ARGS__)

#endif
