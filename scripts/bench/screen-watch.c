/* What a photographer sees, timed: clicks a desktop program's button and watches the
 * X screen for the photo it then shows, for scripts/bench-desktop-apps.
 *
 *   screen-watch X Y W H R1,G1,B1 R2,G2,B2 …
 *
 * Watches the box X,Y W×H of the default screen ($DISPLAY): every millisecond it reads
 * the box (every 4th pixel of every 4th row) and classifies its mean colour as the
 * nearest of the given colours (the shots' own, one per photo the camera serves) when
 * within 40 of it, else as none. Prints `colour MS INDEX` (INDEX -1 for none) at start and
 * on every change, MS on CLOCK_REALTIME in milliseconds. Reads commands on stdin:
 *
 *   click X Y      moves the pointer there, lets 50 ms pass (a toolkit takes a press only
 *                  on a button it saw the pointer enter), then clicks its first button
 *                  (XTest); prints `clicked MS`, the time the press was sent
 *   key NAME       presses and releases a key (an X keysym name, `F5`); prints `keyed MS`
 *   pixel X Y      prints `pixel R G B`, the colour on screen there (to wait for a program
 *                  to reach a state before the timing starts)
 *   rest           stops reading the box until the next click or key (which read it once
 *                  before they press, so that a change while it rested is not timed):
 *                  the benchmark times one program at a time, and a watcher that reads
 *                  its screen every millisecond (with its X server, most of a core) would
 *                  load the machine under the others' shots. Prints `resting`.
 *
 * A poll, not X damage events: the program under test draws however it draws, and the box
 * is read as the screen shows it. Reading the box costs well under a millisecond on Xvfb.
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

/* Reads the box and prints `colour MS INDEX` when its colour changed from *shown. */
static void read_box(Display *display, Window root, int x, int y, int w, int h, int palette[][3], int colours, int *shown) {
    XImage *image = XGetImage(display, root, x, y, w, h, AllPlanes, ZPixmap);
    if (!image) return;
    double at = now_ms();
    long sum[3] = {0, 0, 0}, count = 0;
    for (int row = 0; row < h; row += 4)
        for (int column = 0; column < w; column += 4) {
            unsigned long pixel = XGetPixel(image, column, row);
            sum[0] += (pixel >> 16) & 0xff;
            sum[1] += (pixel >> 8) & 0xff;
            sum[2] += pixel & 0xff;
            count++;
        }
    XDestroyImage(image);
    int nearest = -1;
    long best = 40L * 40L * 3;
    for (int i = 0; i < colours; i++) {
        long d = 0;
        for (int c = 0; c < 3; c++) {
            long e = sum[c] / count - palette[i][c];
            d += e * e;
        }
        if (d < best) best = d, nearest = i;
    }
    if (nearest != *shown) {
        *shown = nearest;
        printf("colour %.1f %d\n", at, nearest);
    }
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: screen-watch X Y W H R,G,B [R,G,B …]\n");
        return 2;
    }
    int x = atoi(argv[1]), y = atoi(argv[2]), w = atoi(argv[3]), h = atoi(argv[4]);
    int colours = argc - 5, palette[64][3];
    if (colours > 64) colours = 64;
    for (int i = 0; i < colours; i++)
        if (sscanf(argv[5 + i], "%d,%d,%d", &palette[i][0], &palette[i][1], &palette[i][2]) != 3) {
            fprintf(stderr, "screen-watch: %s is not R,G,B\n", argv[5 + i]);
            return 2;
        }
    Display *display = XOpenDisplay(NULL);
    if (!display) {
        fprintf(stderr, "screen-watch: cannot open the display %s\n", getenv("DISPLAY") ? getenv("DISPLAY") : "(DISPLAY unset)");
        return 1;
    }
    Window root = DefaultRootWindow(display);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int shown = -2, resting = 0;
    char line[256];
    for (;;) {
        struct pollfd in = {.fd = 0, .events = POLLIN};
        if (poll(&in, 1, resting ? -1 : 1) > 0) {
            if (!fgets(line, sizeof line, stdin)) return 0;
            int cx, cy;
            char key[64];
            if (strncmp(line, "rest", 4) == 0) {
                resting = 1;
                printf("resting\n");
            } else if (sscanf(line, "click %d %d", &cx, &cy) == 2) {
                if (resting) read_box(display, root, x, y, w, h, palette, colours, &shown);
                resting = 0;
                XTestFakeMotionEvent(display, -1, cx, cy, CurrentTime);
                XSync(display, False);
                usleep(50000);  /* the toolkit sees the pointer enter the button first, untimed */
                double at = now_ms();
                XTestFakeButtonEvent(display, 1, True, CurrentTime);
                XTestFakeButtonEvent(display, 1, False, CurrentTime);
                XSync(display, False);
                printf("clicked %.1f\n", at);
            } else if (sscanf(line, "pixel %d %d", &cx, &cy) == 2) {
                XImage *one = XGetImage(display, root, cx, cy, 1, 1, AllPlanes, ZPixmap);
                unsigned long pixel = one ? XGetPixel(one, 0, 0) : 0;
                if (one) XDestroyImage(one);
                printf("pixel %lu %lu %lu\n", (pixel >> 16) & 0xff, (pixel >> 8) & 0xff, pixel & 0xff);
            } else if (sscanf(line, "key %63s", key) == 1) {
                if (resting) read_box(display, root, x, y, w, h, palette, colours, &shown);
                resting = 0;
                KeyCode code = XKeysymToKeycode(display, XStringToKeysym(key));
                double at = now_ms();
                XTestFakeKeyEvent(display, code, True, CurrentTime);
                XTestFakeKeyEvent(display, code, False, CurrentTime);
                XSync(display, False);
                printf("keyed %.1f\n", at);
            }
        }
        if (!resting) read_box(display, root, x, y, w, h, palette, colours, &shown);
    }
}
