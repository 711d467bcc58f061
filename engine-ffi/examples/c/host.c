/* A complete, minimal host of the agent engine in C: it plays a local Agent runtime itself
 * (scripted answers, no network), so it drives a whole conversation with nothing else running:
 * the runtime's checks, the conversation's transcript, a message, its streamed answer.
 *
 * The loop is the drive contract: after every ae_handle_* call, drain ae_poll_intent and
 * ae_poll_event until they answer AE_NONE, then read ae_poll_timeout.
 *
 * Build (from the workspace root, after `cargo build -p engine-ffi`; the binary goes under
 * target/, out of the source tree):
 *   cc -Wall -Wextra -Iengine-ffi/include engine-ffi/examples/c/host.c \
 *      target/debug/libagent_engine.a -lpthread -ldl -lm -o target/host && target/host
 *
 * It prints the streamed answer, then "run: complete", and exits 0; on any error it prints the
 * library's message and exits 1. `target/host errors` instead checks that every entry point
 * refuses null and malformed arguments with an error code.
 */
#include "agent_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE "http://127.0.0.1:8787"

static uint64_t now_us = 0;

static void fail(const char *what, int32_t rc) {
    AeBuf message = {0};
    ae_last_error(&message);
    fprintf(stderr, "%s failed (%d): %.*s\n", what, rc, (int)message.len,
            message.ptr ? (const char *)message.ptr : "");
    ae_buf_free(message);
    exit(1);
}

static int32_t check(int32_t rc, const char *what) {
    if (rc < 0) {
        fail(what, rc);
    }
    return rc;
}

/* Whether `s` holds `needle`. */
static int has(const uint8_t *s, size_t len, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; n <= len && i <= len - n; i++) {
        if (memcmp(s + i, needle, n) == 0) {
            return 1;
        }
    }
    return 0;
}

static int ends_with(AeStr s, const char *suffix) {
    size_t n = strlen(suffix);
    return s.len >= n && memcmp(s.ptr + s.len - n, suffix, n) == 0;
}

static void input(AeEngine *e, const char *json) {
    check(ae_handle_input(e, (const uint8_t *)json, strlen(json), now_us), "ae_handle_input");
}

/* An answer to deliver after the drain (the intent's views are gone by then). */
typedef struct Answer {
    uint64_t id;
    int kind; /* 0: JSON answer, 1: the turn's stream, 2: a stored queue read */
    int status;
    char body[256];
} Answer;

static const char *TURN_FRAMES[] = {
    "data: {\"type\":\"start\",\"messageId\":\"m-1\"}\n\n",
    "data: {\"type\":\"text-start\",\"id\":\"t-1\"}\n\n",
    "data: {\"type\":\"text-delta\",\"id\":\"t-1\",\"delta\":\"Hello\"}\n\n",
    "data: {\"type\":\"text-delta\",\"id\":\"t-1\",\"delta\":\" from\"}\n\n",
    "data: {\"type\":\"text-delta\",\"id\":\"t-1\",\"delta\":\" a C host.\"}\n\n",
    "data: {\"type\":\"text-end\",\"id\":\"t-1\"}\n\n",
    "data: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\n",
    "data: [DONE]\n\n",
};

static void deliver(AeEngine *e, const Answer *a) {
    now_us += 1000;
    if (a->kind == 2) {
        input(e, a->body);
        return;
    }
    const char *head = a->kind == 1
        ? "{\"status\":200,\"contentType\":\"text/event-stream\",\"agentSessionUid\":\"local-default\"}"
        : (a->status == 200 ? "{\"status\":200,\"contentType\":\"application/json\"}"
                            : "{\"status\":404,\"contentType\":\"application/json\"}");
    check(ae_handle_response(e, a->id, (const uint8_t *)head, strlen(head), now_us),
          "ae_handle_response");
    if (a->kind == 1) {
        /* The stream, one frame at a time, split mid-frame too. */
        for (size_t i = 0; i < sizeof TURN_FRAMES / sizeof *TURN_FRAMES; i++) {
            const char *frame = TURN_FRAMES[i];
            size_t half = strlen(frame) / 2;
            check(ae_handle_body_chunk(e, a->id, (const uint8_t *)frame, half, now_us),
                  "ae_handle_body_chunk");
            check(ae_handle_body_chunk(e, a->id, (const uint8_t *)frame + half,
                                       strlen(frame) - half, now_us),
                  "ae_handle_body_chunk");
        }
    } else {
        check(ae_handle_body_chunk(e, a->id, (const uint8_t *)a->body, strlen(a->body), now_us),
              "ae_handle_body_chunk");
    }
    check(ae_handle_body_end(e, a->id, now_us), "ae_handle_body_end");
}

/* The key of a storage request ("key":"..."), into `out`. */
static void storage_key(const AeBuf *json, char *out, size_t cap) {
    const char *tag = "\"key\":\"";
    out[0] = 0;
    for (size_t i = 0; i + strlen(tag) < json->len; i++) {
        if (memcmp(json->ptr + i, tag, strlen(tag)) == 0) {
            size_t start = i + strlen(tag), n = 0;
            while (start + n < json->len && json->ptr[start + n] != '"' && n + 1 < cap) {
                out[n] = (char)json->ptr[start + n];
                n++;
            }
            out[n] = 0;
            return;
        }
    }
}

/* Drains the intents and events once; returns how many answers it queued into `todo`. */
static size_t drain(AeEngine *e, Answer *todo, size_t cap) {
    size_t n = 0;
    AeIntentView iv;
    while (check(ae_poll_intent(e, &iv), "ae_poll_intent") == AE_OK) {
        if (n == cap) {
            fprintf(stderr, "too many requests at once\n");
            exit(1);
        }
        Answer *a = &todo[n];
        memset(a, 0, sizeof *a);
        a->id = iv.id;
        if (iv.kind == AE_INTENT_STORAGE) {
            AeBuf json = {0};
            check(ae_intent_json(e, &json), "ae_intent_json");
            char key[160];
            storage_key(&json, key, sizeof key);
            if (has(json.ptr, json.len, "\"op\":\"load_selection\"")) {
                snprintf(a->body, sizeof a->body,
                         "{\"input\":\"stored_selection_loaded\",\"value\":{\"key\":\"%s\","
                         "\"session_uid\":null}}", key);
                a->kind = 2;
                n++;
            } else if (has(json.ptr, json.len, "\"op\":\"load_queue\"")) {
                snprintf(a->body, sizeof a->body,
                         "{\"input\":\"stored_queue_loaded\",\"value\":{\"key\":\"%s\","
                         "\"rows\":null}}", key);
                a->kind = 2;
                n++;
            }
            ae_buf_free(json);
            continue;
        }
        if (iv.kind != AE_INTENT_HTTP) {
            continue; /* an abort: nothing runs here to stop */
        }
        /* No credential ever goes to a local runtime. */
        for (size_t h = 0; h < iv.header_count; h++) {
            AeStr name, value;
            check(ae_intent_header(e, h, &name, &value), "ae_intent_header");
            if (name.len == 13 && memcmp(name.ptr, "Authorization", 13) == 0) {
                fprintf(stderr, "a credential was sent to the local runtime\n");
                exit(1);
            }
        }
        int post = iv.method.len == 4 && memcmp(iv.method.ptr, "POST", 4) == 0;
        if (ends_with(iv.url, "/ready")) {
            a->status = 200;
            strcpy(a->body, "{\"ok\":true}");
        } else if (ends_with(iv.url, "/health")) {
            a->status = 200;
            strcpy(a->body, "{\"ok\":true,\"mode\":\"local\"}");
        } else if (ends_with(iv.url, "/api/chat") && !post) {
            a->status = 200;
            strcpy(a->body, "{\"status\":\"ready\"}");
        } else if (ends_with(iv.url, "/api/chat") && post) {
            if (!has(iv.body.ptr, iv.body.len, "\"text\":\"Hi from C\"")) {
                fprintf(stderr, "the turn's body lacks the message: %.*s\n", (int)iv.body.len,
                        (const char *)iv.body.ptr);
                exit(1);
            }
            a->kind = 1;
        } else {
            a->status = 404;
            strcpy(a->body, "{\"detail\":\"Not found.\"}");
        }
        n++;
    }
    AeEventView ev;
    while (check(ae_poll_event(e, &ev), "ae_poll_event") == AE_OK) {
        if (ev.kind == AE_EVENT_TEXT_DELTA) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
        }
    }
    uint64_t at;
    if (check(ae_poll_timeout(e, &at), "ae_poll_timeout") == AE_OK && at > now_us) {
        /* A real host arms a timer for `at`; this one has nothing to wait for. */
    }
    return n;
}

static int snapshot_has(AeEngine *e, const char *needle) {
    AeBuf snap = {0};
    check(ae_snapshot(e, &snap), "ae_snapshot");
    int found = has(snap.ptr, snap.len, needle);
    ae_buf_free(snap);
    return found;
}

static int conversation(void) {
    const char *config = "{\"platformBaseUrl\":\"" BASE "\",\"seed\":7}";
    AeEngine *e = NULL;
    check(ae_engine_new((const uint8_t *)config, strlen(config), now_us, &e), "ae_engine_new");
    input(e, "{\"input\":\"source\",\"value\":{\"baseUrl\":\"" BASE "\","
             "\"displayName\":\"Ledger Helper\"}}");
    input(e, "{\"input\":\"is_visible\",\"value\":true}");
    Answer todo[32];
    int sent = 0;
    for (int round = 0; round < 100; round++) {
        size_t n = drain(e, todo, 32);
        AeReadiness ready;
        check(ae_send_readiness(e, &ready), "ae_send_readiness");
        if (!sent && ready.state == AE_SEND_READY) {
            input(e, "{\"input\":\"command\",\"value\":{\"command\":\"send_message\","
                     "\"text\":\"Hi from C\"}}");
            sent = 1;
            continue;
        }
        if (n == 0) {
            break;
        }
        for (size_t i = 0; i < n; i++) {
            deliver(e, &todo[i]);
        }
    }
    int done = sent && snapshot_has(e, "\"runStatus\":\"complete\"") &&
               snapshot_has(e, "\"currentSessionId\":\"local-default\"");
    /* The thread alone (what to read again when its revision moved). */
    AeRevisions rev;
    check(ae_revisions(e, &rev), "ae_revisions");
    AeBuf thread = {0};
    check(ae_thread(e, &thread), "ae_thread");
    done = done && rev.thread > 0 && has(thread.ptr, thread.len, "Hello from a C host.");
    ae_buf_free(thread);
    printf("\nrun: %s\n", done ? "complete" : "not complete");
    ae_engine_free(e);
    return done ? 0 : 1;
}

/* Every entry point survives a null or malformed argument with an error code. */
static int errors(void) {
    int bad = 0;
#define EXPECT(call, code)                                                           \
    do {                                                                             \
        int32_t rc_ = (call);                                                        \
        if (rc_ != (code)) {                                                         \
            fprintf(stderr, "%s: got %d, want %d\n", #call, rc_, (code));           \
            bad = 1;                                                                 \
        }                                                                            \
    } while (0)
    AeEngine *e = NULL;
    AeBuf buf = {0};
    AeIntentView iv;
    AeEventView ev;
    AeStr s1, s2;
    AeRevisions rev;
    AeReadiness ready;
    uint64_t at;
    const uint8_t junk[] = "{not json";
    EXPECT(ae_engine_new(NULL, 5, 0, &e), AE_ERR_NULL);
    EXPECT(ae_engine_new(junk, sizeof junk - 1, 0, &e), AE_ERR_JSON);
    EXPECT(ae_engine_new((const uint8_t *)"{}", 2, 0, &e), AE_ERR_JSON);
    EXPECT(ae_engine_new((const uint8_t *)"{\"platformBaseUrl\":\"nope\"}", 26, 0, &e),
           AE_ERR_CONFIG);
    EXPECT(ae_engine_new((const uint8_t *)"{\"platformBaseUrl\":\"" BASE "\"}",
                         strlen("{\"platformBaseUrl\":\"" BASE "\"}"), 0, NULL),
           AE_ERR_NULL);
    EXPECT(ae_handle_input(NULL, junk, 1, 0), AE_ERR_NULL);
    EXPECT(ae_handle_response(NULL, 1, junk, 1, 0), AE_ERR_NULL);
    EXPECT(ae_handle_body_chunk(NULL, 1, junk, 1, 0), AE_ERR_NULL);
    EXPECT(ae_handle_body_end(NULL, 1, 0), AE_ERR_NULL);
    EXPECT(ae_handle_failure(NULL, 1, junk, 1, 0), AE_ERR_NULL);
    EXPECT(ae_handle_timeout(NULL, 0), AE_ERR_NULL);
    EXPECT(ae_poll_intent(NULL, &iv), AE_ERR_NULL);
    EXPECT(ae_poll_event(NULL, &ev), AE_ERR_NULL);
    EXPECT(ae_poll_timeout(NULL, &at), AE_ERR_NULL);
    EXPECT(ae_snapshot(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_run_status(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_revisions(NULL, &rev), AE_ERR_NULL);
    EXPECT(ae_thread(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_intent_json(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_intent_header(NULL, 0, &s1, &s2), AE_ERR_NULL);
    EXPECT(ae_event_json(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_trace(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_send_readiness(NULL, &ready), AE_ERR_NULL);
    EXPECT(ae_send_readiness_json(NULL, &buf), AE_ERR_NULL);
    EXPECT(ae_last_error(NULL), AE_ERR_NULL);
    ae_engine_free(NULL);
    ae_buf_free(buf);

    const char *config = "{\"platformBaseUrl\":\"" BASE "\"}";
    EXPECT(ae_engine_new((const uint8_t *)config, strlen(config), 0, &e), AE_OK);
    EXPECT(ae_handle_input(e, NULL, 3, 0), AE_ERR_NULL);
    EXPECT(ae_handle_input(e, junk, sizeof junk - 1, 0), AE_ERR_JSON);
    EXPECT(ae_handle_input(e, (const uint8_t *)"{\"input\":\"nope\"}", 16, 0), AE_ERR_JSON);
    EXPECT(ae_handle_input(e, NULL, 0, 0), AE_ERR_JSON);
    EXPECT(ae_handle_input(e, junk, SIZE_MAX, 0), AE_ERR_LENGTH);
    EXPECT(ae_handle_body_chunk(e, 99, junk, SIZE_MAX, 0), AE_ERR_LENGTH);
    {
        /* A refused argument is not quoted back (it may hold a credential). */
        const char *person = "{\"input\":\"person\",\"value\":\"Bearer s3cret\"}";
        EXPECT(ae_handle_input(e, (const uint8_t *)person, strlen(person), 0), AE_ERR_JSON);
        AeBuf message = {0};
        ae_last_error(&message);
        if (message.len == 0 || has(message.ptr, message.len, "s3cret")) {
            fprintf(stderr, "the error quotes the refused value: %.*s\n", (int)message.len,
                    message.ptr ? (const char *)message.ptr : "");
            bad = 1;
        }
        ae_buf_free(message);
    }
    EXPECT(ae_handle_failure(e, 1, NULL, 3, 0), AE_ERR_NULL);
    EXPECT(ae_intent_header(e, 0, &s1, NULL), AE_ERR_NULL);
    EXPECT(ae_run_status(e, NULL), AE_ERR_NULL);
    EXPECT(ae_intent_json(e, NULL), AE_ERR_NULL);
    EXPECT(ae_event_json(e, NULL), AE_ERR_NULL);
    EXPECT(ae_trace(e, NULL), AE_ERR_NULL);
    EXPECT(ae_send_readiness(e, NULL), AE_ERR_NULL);
    EXPECT(ae_send_readiness_json(e, NULL), AE_ERR_NULL);
    /* Not visible yet: blocked, and the cause is named (views and JSON). */
    EXPECT(ae_send_readiness(e, &ready), AE_OK);
    if (ready.state != AE_SEND_BLOCKED || ready.status != 0 ||
        ready.code.len != strlen("not_visible") ||
        memcmp(ready.code.ptr, "not_visible", ready.code.len) != 0) {
        fprintf(stderr, "a new engine is not blocked as not_visible\n");
        bad = 1;
    }
    EXPECT(ae_send_readiness_json(e, &buf), AE_OK);
    if (!has(buf.ptr, buf.len, "\"state\":\"blocked\",\"code\":\"not_visible\"")) {
        fprintf(stderr, "the readiness JSON: %.*s\n", (int)buf.len, (const char *)buf.ptr);
        bad = 1;
    }
    ae_buf_free(buf);
    buf = (AeBuf){0};
    EXPECT(ae_handle_response(e, 99, junk, sizeof junk - 1, 0), AE_ERR_JSON);
    EXPECT(ae_handle_response(e, 99, (const uint8_t *)"{\"status\":200,\"contentType\":null}",
                              33, 0),
           AE_OK); /* an answer to a request never sent is ignored */
    EXPECT(ae_handle_body_chunk(e, 99, NULL, 4, 0), AE_ERR_NULL);
    EXPECT(ae_handle_body_chunk(e, 99, junk, sizeof junk - 1, 0), AE_OK);
    EXPECT(ae_handle_failure(e, 99, junk, sizeof junk - 1, 0), AE_ERR_JSON);
    EXPECT(ae_poll_intent(e, NULL), AE_ERR_NULL);
    EXPECT(ae_poll_event(e, NULL), AE_ERR_NULL);
    EXPECT(ae_poll_timeout(e, NULL), AE_ERR_NULL);
    EXPECT(ae_snapshot(e, NULL), AE_ERR_NULL);
    EXPECT(ae_revisions(e, NULL), AE_ERR_NULL);
    EXPECT(ae_thread(e, NULL), AE_ERR_NULL);
    EXPECT(ae_intent_header(e, 0, NULL, &s2), AE_ERR_NULL);
    while (ae_poll_intent(e, &iv) == AE_OK) {
    }
    if (iv.kind != 0 || iv.url.ptr != NULL || iv.header_count != 0) {
        fprintf(stderr, "AE_NONE left a view in the intent struct\n");
        bad = 1;
    }
    EXPECT(ae_intent_json(e, &buf), AE_ERR_STATE);
    EXPECT(ae_intent_header(e, 0, &s1, &s2), AE_ERR_STATE);
    while (ae_poll_event(e, &ev) == AE_OK) {
    }
    EXPECT(ae_event_json(e, &buf), AE_ERR_STATE);
    EXPECT(ae_trace(e, &buf), AE_NONE);
    EXPECT(ae_last_error(&buf), AE_ERR_STATE);
    if (buf.len == 0) {
        fprintf(stderr, "the last error has no message\n");
        bad = 1;
    }
    ae_buf_free(buf);
    ae_engine_free(e);
    printf("errors: %s\n", bad ? "FAILED" : "ok");
    return bad;
}

int main(int argc, char **argv) {
    printf("agent_engine %s\n", ae_version());
    if (argc > 1 && strcmp(argv[1], "errors") == 0) {
        return errors();
    }
    return conversation();
}
