/* servesim command-line entry point (being built up; see sim_cli.c). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "version") == 0) {
        printf("servesim %s\n", SERVESIM_VERSION);
        return 0;
    }
    fprintf(stderr, "servesim: usage: servesim version\n");
    return 2;
}
