/* For running Windows builds under Wine 8.0 (Debian 12's), which has no bcryptprimitives.dll:
   Rust's standard library (1.78 and later) takes its random bytes from ProcessPrng there.
   This stand-in gives them from RtlGenRandom (advapi32!SystemFunction036). Test harness only
   (scripts/verify-release.sh builds it with mingw into the Wine prefix); never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
