/* The floor for one tethered camera: a plain C loop on libgphoto2's API, as an
 * application written against it would do it, with nothing of shutterpipe's.
 * Per shot: gp_camera_capture, gp_camera_file_get into memory, a durable write (temporary
 * file, fsync, rename, fsync of the folder), then the shot is deleted from the card.
 *
 *   capture-loop PORT SHOTS OUTDIR           prints the milliseconds per shot, wall time over
 *                                            all, opening the camera included
 *   capture-loop PORT SHOTS OUTDIR --burst   the same from the first capture on: a burst
 *   capture-loop PORT SHOTS OUTDIR --each    the same, printing each shot's capture and
 *                                            download (gp_camera_capture to the end of
 *                                            gp_camera_file_get) in milliseconds, a line each
 *   capture-loop PORT SHOTS OUTDIR --set KEY V1,V2,…   a sequence: KEY set to the Nth value
 *                                            (gp_camera_set_single_config) before the Nth
 *                                            shot, as a focus stack or a bracket steps it
 *   capture-loop PORT SECONDS - --preview     live view instead: gp_camera_capture_preview
 *                                            one frame after the other for SECONDS, and
 *                                            prints the frames per second
 *
 * scripts/bench-rig, scripts/bench-gphoto2 and scripts/bench-live compile and run it beside shutterpipe against
 * the same virtual camera.
 */
#include <fcntl.h>
#include <gphoto2/gphoto2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

#define CHECK(call) do { int r = (call); if (r < GP_OK) { fprintf(stderr, "%s: %s\n", #call, gp_result_as_string(r)); return 1; } } while (0)

int main(int argc, char **argv) {
    const char *set_key = NULL;
    char *set_values[1000];
    int set_count = 0;
    if (argc == 7 && strcmp(argv[4], "--set") == 0) {
        set_key = argv[5];  /* timed from the first shot, as a sequence is */
        for (char *value = strtok(argv[6], ","); value && set_count < 1000; value = strtok(NULL, ",")) set_values[set_count++] = value;
        argc = 4;
    }
    if (argc != 4 && !(argc == 5 && (strcmp(argv[4], "--burst") == 0 || strcmp(argv[4], "--each") == 0 || strcmp(argv[4], "--preview") == 0))) {
        fprintf(stderr, "usage: capture-loop PORT SHOTS OUTDIR [--burst | --each | --set KEY V1,V2,...] | capture-loop PORT SECONDS - --preview\n");
        return 2;
    }
    int burst = argc == 5 && strcmp(argv[4], "--burst") == 0, each = argc == 5 && strcmp(argv[4], "--each") == 0;
    int preview = argc == 5 && !burst && !each;
    const char *port = argv[1], *out = argv[3];
    int shots = atoi(argv[2]);
    GPContext *context = gp_context_new();
    Camera *camera;
    CameraAbilitiesList *abilities;
    GPPortInfoList *ports;
    CameraAbilities ability;
    GPPortInfo info;
    CHECK(gp_camera_new(&camera));
    CHECK(gp_abilities_list_new(&abilities));
    CHECK(gp_abilities_list_load(abilities, context));
    if (strncmp(port, "ptpip:", 6) == 0) {  /* on another port (a USB body, vusb), the model found there */
        CHECK(gp_abilities_list_get_abilities(abilities, gp_abilities_list_lookup_model(abilities, "PTP/IP Camera"), &ability));
        CHECK(gp_camera_set_abilities(camera, ability));
    }
    CHECK(gp_port_info_list_new(&ports));
    CHECK(gp_port_info_list_load(ports));
    CHECK(gp_port_info_list_get_info(ports, gp_port_info_list_lookup_path(ports, port), &info));
    CHECK(gp_camera_set_port_info(camera, info));
    double start = now_ms();
    CHECK(gp_camera_init(camera, context));
    if (burst || set_key) start = now_ms();
    if (preview) {
        int frames = 0;
        CameraFile *file;
        CHECK(gp_file_new(&file));
        start = now_ms();
        while (now_ms() - start < shots * 1000.0) {
            CHECK(gp_camera_capture_preview(camera, file, context));
            frames++;
        }
        printf("%.2f\n", frames * 1000.0 / (now_ms() - start));
        gp_file_unref(file);
        gp_camera_exit(camera, context);
        return 0;
    }
    int folder = open(out, O_RDONLY | O_DIRECTORY);
    for (int shot = 0; shot < shots; shot++) {
        CameraFilePath path;
        CameraFile *file;
        const char *data;
        unsigned long size;
        char temporary[4096], final[4096];
        if (set_key && shot < set_count) {
            CameraWidget *widget;
            CHECK(gp_camera_get_single_config(camera, set_key, &widget, context));
            CHECK(gp_widget_set_value(widget, set_values[shot]));
            CHECK(gp_camera_set_single_config(camera, set_key, widget, context));
            gp_widget_free(widget);
        }
        double fired = now_ms();
        CHECK(gp_camera_capture(camera, GP_CAPTURE_IMAGE, &path, context));
        CHECK(gp_file_new(&file));
        CHECK(gp_camera_file_get(camera, path.folder, path.name, GP_FILE_TYPE_NORMAL, file, context));
        if (each) printf("%.3f\n", now_ms() - fired);
        CHECK(gp_file_get_data_and_size(file, &data, &size));
        snprintf(temporary, sizeof temporary, "%s/.tmp-%d", out, shot);
        snprintf(final, sizeof final, "%s/shot-%04d.jpg", out, shot);
        int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0644);
        for (unsigned long done = 0; done < size;) {
            ssize_t written = write(fd, data + done, size - done);
            if (written <= 0) { perror("write"); return 1; }
            done += (unsigned long)written;
        }
        fsync(fd);
        close(fd);
        rename(temporary, final);
        fsync(folder);
        gp_file_unref(file);
        CHECK(gp_camera_file_delete(camera, path.folder, path.name, context));
    }
    if (!each) printf("%.3f\n", (now_ms() - start) / shots);
    close(folder);
    gp_camera_exit(camera, context);
    return 0;
}
