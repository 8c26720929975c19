// Register-only throughput on this CPU: 256-bit FMA (float32) vs the AVX2
// int8 dot step (vpmaddubsw + vpmaddwd + vpaddd), widened at every step
// and, as mech/knn's int8-avx2 kernel does, after m vpmaddubsw results
// are added in int16 (vpaddw). Multiply-adds per ns, one core, three runs
// (docs/performance.md).
//   gcc -O2 bench/avx2_ports.c -o /tmp/avx2_ports && /tmp/avx2_ports
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((target("avx2,fma"))) double fma_run(long n){
  __m256 a0=_mm256_set1_ps(1),a1=a0,a2=a0,a3=a0,a4=a0,a5=a0,a6=a0,a7=a0,a8=a0,a9=a0;
  __m256 x=_mm256_set1_ps(1.0000001f), y=_mm256_set1_ps(0.9999999f);
  double t0=now();
  for(long i=0;i<n;i++){
    a0=_mm256_fmadd_ps(a0,x,y);a1=_mm256_fmadd_ps(a1,x,y);a2=_mm256_fmadd_ps(a2,x,y);a3=_mm256_fmadd_ps(a3,x,y);a4=_mm256_fmadd_ps(a4,x,y);
    a5=_mm256_fmadd_ps(a5,x,y);a6=_mm256_fmadd_ps(a6,x,y);a7=_mm256_fmadd_ps(a7,x,y);a8=_mm256_fmadd_ps(a8,x,y);a9=_mm256_fmadd_ps(a9,x,y);
  }
  double t=now()-t0;
  __m256 s=_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0,a1),_mm256_add_ps(a2,a3)),_mm256_add_ps(_mm256_add_ps(a4,a5),_mm256_add_ps(_mm256_add_ps(a6,a7),_mm256_add_ps(a8,a9))));
  float f[8]; _mm256_storeu_ps(f,s); if(f[0]==42) printf("!");
  return n*10.0*8/t/1e9; // MAC per ns
}
__attribute__((target("avx2"))) double i8_run(long n){
  __m256i a0=_mm256_setzero_si256(),a1=a0,a2=a0,a3=a0,a4=a0,a5=a0,a6=a0,a7=a0;
  __m256i x=_mm256_set1_epi8(3), q0=_mm256_set1_epi8(5), q1=_mm256_set1_epi8(7), q2=_mm256_set1_epi8(2), q3=_mm256_set1_epi8(4), ones=_mm256_set1_epi16(1);
  double t0=now();
  for(long i=0;i<n;i++){
    __asm__ volatile("" : "+x"(x), "+x"(q0), "+x"(q1), "+x"(q2), "+x"(q3));
#define S(a,q) a=_mm256_add_epi32(a,_mm256_madd_epi16(_mm256_maddubs_epi16(x,q),ones));
    S(a0,q0)S(a1,q1)S(a2,q2)S(a3,q3)
    __asm__ volatile("" : "+x"(x), "+x"(q0), "+x"(q1), "+x"(q2), "+x"(q3));
    S(a4,q0)S(a5,q1)S(a6,q2)S(a7,q3)
  }
  double t=now()-t0;
  __m256i s=_mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0,a1),_mm256_add_epi32(a2,a3)),_mm256_add_epi32(_mm256_add_epi32(a4,a5),_mm256_add_epi32(a6,a7)));
  int f[8]; _mm256_storeu_si256((__m256i*)f,s); if(f[0]==42) printf("!");
  return n*8.0*32/t/1e9; // int8 MAC per ns
}
// m vpmaddubsw results summed in int16 (vpaddw), then one vpmaddwd(ones) + vpaddd
#define RUN(NAME, M) __attribute__((target("avx2"))) double NAME(long n){ \
  __m256i a0=_mm256_setzero_si256(),a1=a0,a2=a0,a3=a0,a4=a0,a5=a0,a6=a0,a7=a0; \
  __m256i x=_mm256_set1_epi8(3), q0=_mm256_set1_epi8(5), q1=_mm256_set1_epi8(7), q2=_mm256_set1_epi8(2), q3=_mm256_set1_epi8(4), ones=_mm256_set1_epi16(1); \
  double t0=now(); \
  for(long i=0;i<n;i++){ \
    __m256i h0,h1,h2,h3,h4,h5,h6,h7; \
    __asm__ volatile("" : "+x"(x), "+x"(q0), "+x"(q1), "+x"(q2), "+x"(q3)); \
    h0=_mm256_maddubs_epi16(x,q0);h1=_mm256_maddubs_epi16(x,q1);h2=_mm256_maddubs_epi16(x,q2);h3=_mm256_maddubs_epi16(x,q3); \
    h4=_mm256_maddubs_epi16(q0,x);h5=_mm256_maddubs_epi16(q1,x);h6=_mm256_maddubs_epi16(q2,x);h7=_mm256_maddubs_epi16(q3,x); \
    for(int m=1;m<M;m++){ __asm__ volatile("" : "+x"(x), "+x"(q0), "+x"(q1), "+x"(q2), "+x"(q3)); \
      h0=_mm256_add_epi16(h0,_mm256_maddubs_epi16(x,q0));h1=_mm256_add_epi16(h1,_mm256_maddubs_epi16(x,q1));h2=_mm256_add_epi16(h2,_mm256_maddubs_epi16(x,q2));h3=_mm256_add_epi16(h3,_mm256_maddubs_epi16(x,q3)); \
      h4=_mm256_add_epi16(h4,_mm256_maddubs_epi16(q0,x));h5=_mm256_add_epi16(h5,_mm256_maddubs_epi16(q1,x));h6=_mm256_add_epi16(h6,_mm256_maddubs_epi16(q2,x));h7=_mm256_add_epi16(h7,_mm256_maddubs_epi16(q3,x)); } \
    a0=_mm256_add_epi32(a0,_mm256_madd_epi16(h0,ones));a1=_mm256_add_epi32(a1,_mm256_madd_epi16(h1,ones));a2=_mm256_add_epi32(a2,_mm256_madd_epi16(h2,ones));a3=_mm256_add_epi32(a3,_mm256_madd_epi16(h3,ones)); \
    a4=_mm256_add_epi32(a4,_mm256_madd_epi16(h4,ones));a5=_mm256_add_epi32(a5,_mm256_madd_epi16(h5,ones));a6=_mm256_add_epi32(a6,_mm256_madd_epi16(h6,ones));a7=_mm256_add_epi32(a7,_mm256_madd_epi16(h7,ones)); \
  } \
  double t=now()-t0; \
  __m256i s=_mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0,a1),_mm256_add_epi32(a2,a3)),_mm256_add_epi32(_mm256_add_epi32(a4,a5),_mm256_add_epi32(a6,a7))); \
  int f[8]; _mm256_storeu_si256((__m256i*)f,s); if(f[0]==42) printf("!"); \
  return n*8.0*32*M/t/1e9; }
RUN(i8m1,1)
RUN(i8m2,2)
RUN(i8m4,4)
RUN(i8m8,8)
int main(){ for(int r=0;r<3;r++){ printf("fma32 %.1f  int8-avx2 %.1f  m2 %.1f  m4 %.1f  m8 %.1f MAC/ns\n", fma_run(200000000), i8_run(200000000), i8m2(50000000), i8m4(25000000), i8m8(12500000)); } }
