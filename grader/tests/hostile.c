/* A program that misbehaves on request, for the sandbox tests:
 *   hostile sleep              sleeps forever
 *   hostile forkbomb           forks as many sleeping children as it can, reports how many
 *                              forks succeeded and failed on stdout, then sleeps
 *   hostile flood BYTES        writes BYTES bytes to stdout
 *   hostile write FILE BYTES   writes BYTES bytes to FILE
 *   hostile crash              dereferences a null pointer
 *   hostile exit N             exits with status N
 *   hostile fd N TEXT          writes TEXT and a newline to descriptor N, then exits 0
 *   hostile read FILE          prints FILE's first line; exit status 1 when it cannot
 *   hostile net                tries a TCP connection to 1.1.1.1:53; exit status 1 when
 *                              it cannot (the reason on stdout)
 * Arguments after the ones named are ignored (tests mark processes with them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "read") == 0 && argc >= 3) {
        FILE *f = fopen(argv[2], "r");
        char line[256] = "";
        if (!f || !fgets(line, sizeof line, f)) {
            printf("cannot read %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        printf("%s", line);
        return 0;
    }
    if (strcmp(argv[1], "net") == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
        inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
        if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
            printf("no network: %s\n", strerror(errno));
            return 1;
        }
        printf("connected\n");
        return 0;
    }
    if (strcmp(argv[1], "sleep") == 0) {
        for (;;)
            pause();
    }
    if (strcmp(argv[1], "forkbomb") == 0) {
        int ok = 0, failed = 0;
        for (int i = 0; i < 5000; i++) {
            pid_t p = fork();
            if (p == 0) {
                for (;;)
                    pause();
            }
            if (p < 0)
                failed++;
            else
                ok++;
        }
        printf("forked %d failed %d\n", ok, failed);
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(argv[1], "flood") == 0 && argc == 3) {
        long long n = atoll(argv[2]);
        static char block[65536];
        memset(block, 'x', sizeof block);
        while (n > 0) {
            size_t k = n < (long long)sizeof block ? (size_t)n : sizeof block;
            if (fwrite(block, 1, k, stdout) != k)
                return 1;
            n -= (long long)k;
        }
        return 0;
    }
    if (strcmp(argv[1], "write") == 0 && argc == 4) {
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 1;
        long long n = atoll(argv[3]);
        static char block[65536];
        while (n > 0) {
            size_t k = n < (long long)sizeof block ? (size_t)n : sizeof block;
            if (fwrite(block, 1, k, f) != k)
                return 1;
            n -= (long long)k;
        }
        return fclose(f) != 0;
    }
    if (strcmp(argv[1], "crash") == 0) {
        volatile int *p = NULL;
        *p = 1;
        return 0;
    }
    if (strcmp(argv[1], "exit") == 0 && argc == 3)
        return atoi(argv[2]);
    if (strcmp(argv[1], "fd") == 0 && argc == 4) {
        int fd = atoi(argv[2]);
        dprintf(fd, "%s\n", argv[3]);
        return 0;
    }
    return 2;
}
