/* hello.c: the agent engine from C against a platform over plain HTTP (loopback, such as
 * platform-sim): open the person's default session with an Agent, wait until a message can be
 * sent, send "Hello", print the streamed answer.
 *
 * The engine decides; this host owns the network and the clock. Its loop is the drive
 * contract: drain ae_poll_intent (start or abort requests) and ae_poll_event (print the
 * answer), then wait with poll() for the sockets and for the timer ae_poll_timeout names, and
 * hand the engine what came: response heads, body pieces as they arrive, failures, the timer.
 *
 * Build (from the workspace root, after `cargo build -p engine-ffi`):
 *   cc -std=c11 -Wall -Wextra -Iengine-ffi/include engine-ffi/examples/c/hello.c \
 *      target/debug/libagent_engine.a -lpthread -ldl -lm -o target/hello
 * Run against platform-sim (`cargo run -p platform-sim -- --port 8787`):
 *   target/hello http://127.0.0.1:8787 sim-platform-token user-demo env-demo agent-demo
 *
 * It prints the answer and exits 0. When no message can be sent it prints the cause (its
 * code, message and HTTP status) to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include "agent_engine.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUESTS 16

/* One request on the wire. The answer's body is read by Content-Length, as chunks
 * (Transfer-Encoding: chunked), or to the end of the connection. */
typedef struct Request {
    int fd; /* -1: a free slot */
    uint64_t id;
    char head[16384];
    size_t head_len;
    int head_done;
    int chunked;
    long long left;  /* the body's (or the current chunk's) bytes still to come; -1: to EOF */
    int chunk_state; /* chunked: 0 reading a size line, 1 data, 2 the CRLF after the data */
    char size_line[32];
    size_t size_len;
} Request;

static AeEngine *engine;
static Request requests[MAX_REQUESTS];

static uint64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void check(int32_t rc, const char *what) {
    if (rc < 0) {
        AeBuf m = {0};
        ae_last_error(&m);
        fprintf(stderr, "%s failed (%d): %.*s\n", what, rc, (int)m.len,
                m.ptr ? (const char *)m.ptr : "");
        ae_buf_free(m);
        exit(2);
    }
}

/* `s` as a JSON string, quoted and escaped (one of a few rotating buffers). */
static const char *quoted(const char *s, size_t n) {
    static char bufs[4][4096];
    static int next;
    char *out = bufs[next++ % 4];
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n && o + 3 < sizeof bufs[0]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
        }
        if (c >= 0x20) {
            out[o++] = (char)c;
        }
    }
    out[o++] = '"';
    out[o] = 0;
    return out;
}

static void input(const char *json) {
    check(ae_handle_input(engine, (const uint8_t *)json, strlen(json), now_us()), "ae_handle_input");
}

static void finish(Request *r) {
    if (r->fd >= 0) {
        close(r->fd);
    }
    r->fd = -1;
}

/* Whether the library's buffer (not NUL-terminated) holds `needle`. */
static int contains(AeBuf b, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; n <= b.len && i <= b.len - n; i++) {
        if (memcmp(b.ptr + i, needle, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The request failed below HTTP: before its head came ("no_answer") or within its body. */
static void fail(Request *r, const char *message) {
    char json[4200];
    snprintf(json, sizeof json, "{\"kind\":\"%s\",\"message\":%s}",
             r->head_done ? "broken" : "no_answer", quoted(message, strlen(message)));
    check(ae_handle_failure(engine, r->id, (const uint8_t *)json, strlen(json), now_us()),
          "ae_handle_failure");
    finish(r);
}

/* A header's value in the received head, or NULL. */
static const char *header(Request *r, const char *name, size_t *len) {
    size_t n = strlen(name);
    for (char *line = strstr(r->head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, name, n) == 0 && line[2 + n] == ':') {
            const char *v = line + 3 + n;
            while (*v == ' ') {
                v++;
            }
            *len = strcspn(v, "\r");
            return v;
        }
    }
    return NULL;
}

/* The status line and headers are in: hand the head to the engine. */
static void head(Request *r) {
    int status = 0, at = 0;
    sscanf(r->head, "HTTP/1.%*d %d%n", &status, &at);
    const char *reason = r->head + at + (r->head[at] == ' ');
    size_t n;
    const char *type = header(r, "Content-Type", &n);
    char json[8400];
    snprintf(json, sizeof json, "{\"status\":%d,\"reason\":%s,\"contentType\":%s}", status,
             quoted(reason, strcspn(reason, "\r")), type ? quoted(type, n) : "null");
    check(ae_handle_response(engine, r->id, (const uint8_t *)json, strlen(json), now_us()),
          "ae_handle_response");
    const char *te = header(r, "Transfer-Encoding", &n);
    const char *cl = header(r, "Content-Length", &n);
    r->chunked = te && strncasecmp(te, "chunked", 7) == 0;
    r->left = r->chunked ? 0 : cl ? atoll(cl) : -1;
}

static void body_piece(Request *r, const char *p, size_t n) {
    check(ae_handle_body_chunk(engine, r->id, (const uint8_t *)p, n, now_us()),
          "ae_handle_body_chunk");
}

static void body_end(Request *r) {
    check(ae_handle_body_end(engine, r->id, now_us()), "ae_handle_body_end");
    finish(r);
}

/* Bytes of the body as they arrive: given on at once, without their chunk framing. */
static void body(Request *r, const char *p, size_t n) {
    while (n > 0 && r->fd >= 0) {
        if (r->chunked && r->chunk_state != 1) {
            /* A chunk's size line, or the CRLF after its data: up to the newline. */
            const char *nl = memchr(p, '\n', n);
            size_t take = nl ? (size_t)(nl - p) + 1 : n;
            size_t room = sizeof r->size_line - 1 - r->size_len, k = take < room ? take : room;
            if (r->chunk_state == 0) {
                memcpy(r->size_line + r->size_len, p, k);
                r->size_line[r->size_len += k] = 0;
            }
            p += take, n -= take;
            if (nl && r->chunk_state == 2) {
                r->chunk_state = 0;
            } else if (nl) {
                r->left = strtoll(r->size_line, NULL, 16);
                r->size_len = 0;
                r->chunk_state = 1;
                if (r->left == 0) {
                    body_end(r); /* the last chunk (its trailers are not read) */
                }
            }
            continue;
        }
        size_t take = r->left >= 0 && (size_t)r->left < n ? (size_t)r->left : n;
        body_piece(r, p, take);
        p += take, n -= take;
        if (r->left >= 0 && (r->left -= (long long)take) == 0) {
            if (r->chunked) {
                r->chunk_state = 2;
            } else {
                body_end(r);
            }
        }
    }
}

/* Bytes from the socket: the head until its blank line, then the body. */
static void received(Request *r, const char *p, size_t n) {
    if (r->head_done) {
        body(r, p, n);
        return;
    }
    size_t room = sizeof r->head - 1 - r->head_len;
    size_t take = n < room ? n : room;
    memcpy(r->head + r->head_len, p, take);
    r->head[r->head_len + take] = 0;
    char *end = strstr(r->head, "\r\n\r\n");
    if (!end) {
        r->head_len += take;
        if (r->head_len == sizeof r->head - 1) {
            fail(r, "the response head is too long");
        }
        return;
    }
    size_t head_len = (size_t)(end - r->head) + 4;
    size_t rest = r->head_len + take - head_len; /* body bytes that came with the head */
    r->head_len = head_len;
    r->head[head_len] = 0;
    r->head_done = 1;
    head(r);
    if (!r->chunked && r->left == 0) {
        body_end(r);
    } else {
        body(r, p + take - rest, rest + (n - take));
    }
}

static void send_all(Request *r, const void *p, size_t n) {
    while (n > 0 && r->fd >= 0) {
        ssize_t sent = send(r->fd, p, n, 0);
        if (sent <= 0) {
            fail(r, "the request could not be sent");
            return;
        }
        p = (const char *)p + sent, n -= (size_t)sent;
    }
}

/* Starts the HTTP request the engine asked for (plain http only). */
static void start(const AeIntentView *iv) {
    Request *r = NULL;
    for (int i = 0; i < MAX_REQUESTS && !r; i++) {
        r = requests[i].fd < 0 ? &requests[i] : NULL;
    }
    if (!r) {
        fprintf(stderr, "more than %d requests at once\n", MAX_REQUESTS);
        exit(2);
    }
    memset(r, 0, sizeof *r);
    r->id = iv->id;
    r->fd = -1;
    /* http://HOST[:PORT]/PATH?QUERY */
    char url[2048], host[256], port[16] = "80";
    snprintf(url, sizeof url, "%.*s", (int)iv->url.len, (const char *)iv->url.ptr);
    if (strncmp(url, "http://", 7) != 0) {
        fail(r, "only plain http is supported here");
        return;
    }
    const char *authority = url + 7, *path = authority + strcspn(authority, "/");
    snprintf(host, sizeof host, "%.*s", (int)(path - authority), authority);
    char *colon = strchr(host, ':');
    if (colon) {
        snprintf(port, sizeof port, "%s", colon + 1);
        *colon = 0;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, port, &hints, &ai) != 0) {
        fail(r, "the host is unknown");
        return;
    }
    r->fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    int error = r->fd < 0 || connect(r->fd, ai->ai_addr, ai->ai_addrlen) != 0 ? errno : 0;
    freeaddrinfo(ai);
    if (error) {
        fail(r, strerror(error)); /* "Connection refused" */
        return;
    }
    int one = 1;
    setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char head[8192];
    int n = snprintf(head, sizeof head,
                     "%.*s %s HTTP/1.1\r\nHost: %.*s\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n",
                     (int)iv->method.len, (const char *)iv->method.ptr, *path ? path : "/",
                     (int)(path - authority), authority, iv->body.len);
    for (size_t h = 0; h < iv->header_count && (size_t)n < sizeof head; h++) {
        AeStr name, value; /* the Authorization value is the token: sent, never printed */
        check(ae_intent_header(engine, h, &name, &value), "ae_intent_header");
        n += snprintf(head + n, sizeof head - (size_t)n, "%.*s: %.*s\r\n", (int)name.len,
                      (const char *)name.ptr, (int)value.len, (const char *)value.ptr);
    }
    if ((size_t)n < sizeof head) {
        n += snprintf(head + n, sizeof head - (size_t)n, "\r\n");
    }
    if ((size_t)n >= sizeof head) {
        fail(r, "the request's head is too long");
        return;
    }
    send_all(r, head, (size_t)n);
    send_all(r, iv->body.ptr, iv->body.len);
}

/* Takes every intent and event the engine has; 1 when the message failed. */
static int drain(void) {
    AeIntentView iv;
    while (ae_poll_intent(engine, &iv) == AE_OK) {
        if (iv.kind == AE_INTENT_HTTP) {
            start(&iv);
        } else if (iv.kind == AE_INTENT_ABORT) {
            for (int i = 0; i < MAX_REQUESTS; i++) {
                if (requests[i].fd >= 0 && requests[i].id == iv.id) {
                    finish(&requests[i]);
                }
            }
        }
        /* AE_INTENT_STORAGE: nothing is stored here; the engine goes on without it. */
    }
    AeEventView ev;
    while (ae_poll_event(engine, &ev) == AE_OK) {
        if (ev.kind == AE_EVENT_TEXT_DELTA) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
        } else if (ev.kind == AE_EVENT_OTHER) {
            AeBuf json = {0};
            check(ae_event_json(engine, &json), "ae_event_json");
            int failed = contains(json, "\"event\":\"message_not_sent\"") ||
                         contains(json, "\"event\":\"run_failed\"");
            if (failed) {
                fprintf(stderr, "\nthe message failed: %.*s\n", (int)json.len, (const char *)json.ptr);
            }
            ae_buf_free(json);
            if (failed) {
                return 1;
            }
        }
    }
    return 0;
}

/* Whether the Agent is working on the message (the run-status channel). */
static int agent_working(void) {
    AeBuf run = {0};
    check(ae_run_status(engine, &run), "ae_run_status");
    int working = contains(run, "\"isAgentWorking\":true");
    ae_buf_free(run);
    return working;
}

/* Waits for the sockets and the engine's timer, and hands the engine what came. */
static void wait_and_feed(void) {
    struct pollfd fds[MAX_REQUESTS];
    Request *of[MAX_REQUESTS];
    int n = 0;
    for (int i = 0; i < MAX_REQUESTS; i++) {
        if (requests[i].fd >= 0) {
            of[n] = &requests[i];
            fds[n++] = (struct pollfd){.fd = requests[i].fd, .events = POLLIN};
        }
    }
    uint64_t at, now = now_us();
    int timer = ae_poll_timeout(engine, &at) == AE_OK;
    if (n == 0 && !timer) {
        fprintf(stderr, "the engine waits for nothing\n");
        exit(2);
    }
    int ms = !timer ? -1 : at <= now ? 0 : (int)((at - now + 999) / 1000);
    poll(fds, (nfds_t)n, ms);
    if (timer && now_us() >= at) {
        check(ae_handle_timeout(engine, now_us()), "ae_handle_timeout");
    }
    for (int f = 0; f < n; f++) {
        Request *r = of[f];
        if (!fds[f].revents || r->fd != fds[f].fd) {
            continue;
        }
        char buf[16384];
        ssize_t got = recv(r->fd, buf, sizeof buf, 0);
        if (got > 0) {
            received(r, buf, (size_t)got);
        } else if (r->head_done && r->left < 0) {
            body_end(r); /* a body read to the end of the connection */
        } else {
            fail(r, got == 0 ? "the connection closed early" : strerror(errno));
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s BASE_URL TOKEN USER_UID ENVIRONMENT_UID AGENT_UID\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < MAX_REQUESTS; i++) {
        requests[i].fd = -1;
    }
    char json[12600];
    snprintf(json, sizeof json, "{\"platformBaseUrl\":%s}", quoted(argv[1], strlen(argv[1])));
    check(ae_engine_new((const uint8_t *)json, strlen(json), now_us(), &engine), "ae_engine_new");
    /* The person, the Environment, the default session with the Agent, shown and visible. */
    snprintf(json, sizeof json, "{\"input\":\"person\",\"value\":{\"userUid\":%s,\"token\":%s}}",
             quoted(argv[3], strlen(argv[3])), quoted(argv[2], strlen(argv[2])));
    input(json);
    snprintf(json, sizeof json, "{\"input\":\"environment_uid\",\"value\":%s}",
             quoted(argv[4], strlen(argv[4])));
    input(json);
    snprintf(json, sizeof json,
             "{\"input\":\"default_session\",\"value\":{\"agentUid\":%s,"
             "\"handleUniqueId\":\"hello-c\",\"name\":\"hello.c\"}}",
             quoted(argv[5], strlen(argv[5])));
    input(json);
    input("{\"input\":\"shows_default_session\",\"value\":true}");
    input("{\"input\":\"is_visible\",\"value\":true}");

    int sent = 0, started = 0, rc = 0;
    for (;;) {
        if (drain()) {
            rc = 1;
            break;
        }
        if (!sent) {
            AeReadiness r;
            check(ae_send_readiness(engine, &r), "ae_send_readiness");
            if (r.state == AE_SEND_BLOCKED) {
                /* The cause: its code and text; the failing read's text and HTTP status. */
                fprintf(stderr, "not ready (%.*s): %.*s\n", (int)r.code.len,
                        (const char *)r.code.ptr, (int)r.message.len, (const char *)r.message.ptr);
                if (r.failure.len > 0) {
                    fprintf(stderr, "failure: %.*s\n", (int)r.failure.len, (const char *)r.failure.ptr);
                }
                if (r.status != 0) {
                    fprintf(stderr, "HTTP status: %u\n", (unsigned)r.status);
                }
                rc = 1;
                break;
            }
            if (r.state == AE_SEND_READY) {
                input("{\"input\":\"command\",\"value\":{\"command\":\"send_message\","
                      "\"text\":\"Hello\"}}");
                sent = 1;
                continue;
            }
        } else if (agent_working()) {
            started = 1;
        } else if (started) {
            printf("\n");
            break; /* the answer is complete */
        }
        wait_and_feed();
    }
    for (int i = 0; i < MAX_REQUESTS; i++) {
        finish(&requests[i]);
    }
    ae_engine_free(engine);
    return rc;
}
