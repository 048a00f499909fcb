/* uv_echo.c -- a reference echo server on libuv, for `make bench` only.
 *
 *   uv_echo PORT [LOOPS]
 *
 * Echoes every byte back (our lines are plain bytes to it). With LOOPS > 1,
 * each loop runs on its own thread with its own listening socket on the
 * same port (SO_REUSEPORT), so the kernel spreads connections over them.
 * Written the way libuv's own examples write an echo server.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <uv.h>

static int port;

struct write_req {
    uv_write_t req;
    uv_buf_t buf;
};

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = suggested;
}

static void close_cb(uv_handle_t *h)
{
    free(h);
}

static void write_cb(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    (void)status;
    free(w->buf.base);
    free(w);
}

static void read_cb(uv_stream_t *client, ssize_t nread, const uv_buf_t *buf)
{
    if (nread > 0) {
        struct write_req *w = malloc(sizeof(*w));
        w->buf = uv_buf_init(buf->base, (unsigned)nread);
        uv_write(&w->req, client, &w->buf, 1, write_cb);
        return;
    }
    free(buf->base);
    if (nread < 0)
        uv_close((uv_handle_t *)client, close_cb);
}

static void connection_cb(uv_stream_t *server, int status)
{
    if (status < 0)
        return;
    uv_tcp_t *client = malloc(sizeof(*client));
    uv_tcp_init(server->loop, client);
    if (uv_accept(server, (uv_stream_t *)client) == 0) {
        uv_tcp_nodelay(client, 1);
        uv_read_start((uv_stream_t *)client, alloc_cb, read_cb);
    } else {
        uv_close((uv_handle_t *)client, close_cb);
    }
}

static void *loop_main(void *arg)
{
    (void)arg;
    uv_loop_t loop;
    uv_tcp_t server;
    uv_loop_init(&loop);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        perror("uv_echo: bind");
        exit(1);
    }
    uv_tcp_init(&loop, &server);
    uv_tcp_open(&server, fd);
    if (uv_listen((uv_stream_t *)&server, 511, connection_cb) < 0) {
        fprintf(stderr, "uv_echo: listen failed\n");
        exit(1);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: uv_echo PORT [LOOPS]\n");
        return 2;
    }
    port = atoi(argv[1]);
    int loops = argc > 2 ? atoi(argv[2]) : 1;
    pthread_t th[64];
    for (int i = 1; i < loops && i < 64; i++)
        pthread_create(&th[i], NULL, loop_main, NULL);
    loop_main(NULL);
    return 0;
}
