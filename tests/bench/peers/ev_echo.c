/* ev_echo.c -- a reference echo server on libevent, for `make bench` only.
 *
 *   ev_echo PORT [BASES]
 *
 * bufferevents echo every byte back. With BASES > 1, each event base runs
 * on its own thread with its own listener on the same port
 * (LEV_OPT_REUSEABLE_PORT), so the kernel spreads connections over them.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

static int port;

static void read_cb(struct bufferevent *bev, void *arg)
{
    (void)arg;
    evbuffer_add_buffer(bufferevent_get_output(bev), bufferevent_get_input(bev));
}

static void event_cb(struct bufferevent *bev, short events, void *arg)
{
    (void)arg;
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        bufferevent_free(bev);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int socklen, void *arg)
{
    (void)sa;
    (void)socklen;
    (void)arg;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct event_base *base = evconnlistener_get_base(l);
    struct bufferevent *bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(bev, read_cb, NULL, event_cb, NULL);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void *base_main(void *arg)
{
    (void)arg;
    struct event_base *base = event_base_new();
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct evconnlistener *l = evconnlistener_new_bind(
        base, accept_cb, NULL,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT, 511,
        (struct sockaddr *)&addr, sizeof(addr));
    if (!l) {
        perror("ev_echo: listen");
        exit(1);
    }
    event_base_dispatch(base);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ev_echo PORT [BASES]\n");
        return 2;
    }
    port = atoi(argv[1]);
    int bases = argc > 2 ? atoi(argv[2]) : 1;
    pthread_t th[64];
    for (int i = 1; i < bases && i < 64; i++)
        pthread_create(&th[i], NULL, base_main, NULL);
    base_main(NULL);
    return 0;
}
