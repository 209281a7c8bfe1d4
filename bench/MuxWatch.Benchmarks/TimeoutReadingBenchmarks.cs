using BenchmarkDotNet.Attributes;
using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.Reading;

namespace MuxWatch.Benchmarks;

/// <summary>Messages read and diagnosed per second per core, and bytes allocated per message.</summary>
[MemoryDiagnoser]
public class TimeoutReadingBenchmarks
{
    private static readonly Dictionary<string, string> Messages = new()
    {
        ["3.x-sync"] = "Timeout performing GET MyKey (5000ms), inst: 2, qu: 0, qs: 6, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, last-in: 0, cur-in: 0, sync-ops: 1234, async-ops: 5678, serverEndpoint: redis.example:6379, conn-sec: 12345.67, aoc: 1, mc: 1/1/0, clientName: web01, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), POOL: (Threads=9,QueuedItems=0,CompletedItems=123456,Timers=12), v: 3.1.31.17473 (see https://seredis.dev/Timeouts for some common client-side issues that can cause timeouts)",
        ["async"] = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 5023ms elapsed, timeout is 5000ms), command=GET, next: GET key2, inst: 0, qu: 0, qs: 3, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, last-in: 2, cur-in: 0, sync-ops: 0, async-ops: 100, serverEndpoint: 10.0.0.5:6380, conn-sec: 3600.5, aoc: 0, mc: 1/1/0, mgr: 10 of 10 available, clientName: app, IOCP: (Busy=0,Free=1000,Min=4,Max=1000), WORKER: (Busy=1,Free=32766,Min=4,Max=32767), v: 2.6.122.38350",
        ["1.x"] = "Timeout performing GET mykey, inst: 1, mgr: Inactive, err: never, queue: 2, qu: 0, qs: 2, qc: 0, wr: 0, wq: 0, in: 0, ar: 0, clientName: WebApp, serverEndpoint: Unspecified/cache.example:6379, keyHashSlot: 14687, IOCP: (Busy=0,Free=1000,Min=4,Max=1000), WORKER: (Busy=12,Free=32755,Min=4,Max=32767), Local-CPU: 95,3% (Please take a look at this article for some common client-side issues that can cause timeouts: http://stackexchange.github.io/StackExchange.Redis/Timeouts)",
        ["pasted-multiline"] = "2024-05-01 12:00:01.123 ERROR StackExchange.Redis.RedisTimeoutException: Timeout performing GET key (5000ms), inst: 2, qu: 0,\n qs: 6, aw: False, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: 127.0.0.1:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WOR\nKER: (Busy=30,Free=32737,Min=8,Max=32767)\n   at StackExchange.Redis.ConnectionMultiplexer.ExecuteSyncImpl[T](Message message)",
    };

    [ParamsSource(nameof(Names))]
    public string Message { get; set; } = "3.x-sync";

    public static IEnumerable<string> Names => Messages.Keys;

    [Benchmark]
    public TimeoutDiagnosis ReadAndDiagnose() => TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(Messages[Message]));
}
