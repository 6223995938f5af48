/* CPU tests of the shallow-water serial reference: the oracle every GPU test trusts. Each
   one checks physics that a wrong flux, sign or wall rule would break (the full set is in
   common/tests/test_swe.c). */
#include "labkit/swe_testing.h"

Test(serial, water_volume_is_conserved)
{
    static const char *specs[3] = {"bumps:61x47:3", "dam:37x53", "damrot:1x64"};
    for (int k = 0; k < 3; k++) {
        lk_swe sim;
        lk_swe_fields out;
        lk_test_swe_gen(specs[k], &sim);
        lk_test_swe_serial(&sim, 400, &out);
        lk_test_swe_check_mass(&sim, &out, specs[k]);
        lk_swe_fields_free(&out);
        lk_swe_free(&sim);
    }
}

Test(serial, a_dam_uniform_along_one_axis_stays_uniform)
{
    lk_swe sim;
    lk_swe_fields out;
    lk_test_swe_load("swe-odd", &sim, NULL, NULL);
    lk_test_swe_serial(&sim, 200, &out);
    lk_test_swe_check_uniform(&sim, &out, 1, "swe-odd (dam:37x53) after 200 steps");
    lk_swe_fields_free(&out);
    lk_swe_free(&sim);
}

Test(serial, rotated_dam_equals_the_transposed_dam)
{
    lk_swe a, b;
    lk_swe_fields ra, rb, t;
    lk_test_swe_load("swe-odd", &a, NULL, NULL);
    lk_test_swe_load("swe-odd-rot", &b, NULL, NULL);
    lk_test_swe_serial(&a, 100, &ra);
    lk_test_swe_serial(&b, 100, &rb);
    lk_test_swe_transpose(&a, &ra, &t);
    lk_test_swe_assert_eq(&b, &rb, &t, "swe-odd-rot vs transposed swe-odd, 100 steps");
    lk_swe_fields_free(&ra);
    lk_swe_fields_free(&rb);
    lk_swe_fields_free(&t);
    lk_swe_free(&a);
    lk_swe_free(&b);
}

/* The dam break converges to the Stoker solution as the grid is refined. */
Test(serial, dam_break_converges_to_stoker)
{
    double e100 = lk_test_swe_stoker_l1(100, 0.0), e200 = lk_test_swe_stoker_l1(200, 0.0),
           e400 = lk_test_swe_stoker_l1(400, 0.0);
    cr_assert(e200 < 0.8 * e100 && e400 < 0.8 * e200 && e400 < 60.0,
              "L1 errors of Z against Stoker at t = 5 s: %.3f (N = 100), %.3f (200), %.3f "
              "(400) m^2: they should fall by at least 20%% per refinement, to about 45",
              e100, e200, e400);
}
