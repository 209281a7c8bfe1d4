// Usage:
//   MuxWatch.TestApp starve <host:port>   starve the pool until a real GET times out; print each recorded timeout as a JSON line,
//                                        then the metrics MuxWatch exported while the pool was starved, each line prefixed "metrics: "
//   MuxWatch.TestApp storm <count>        throw <count> distinct RedisTimeoutExceptions on 4 threads; print what MuxWatch accounted for
//   MuxWatch.TestApp pubsub <host:port>   an app whose handler-based subscription sleeps 1 s per message while 100 messages a second
//                                        arrive, its multiplexer watched with MeasurePubSubLag: print "slow: <lag>" once MuxWatch's
//                                        delivery lag passes the sleep, then make the handler fast and print "fast: <lag>" once the lag
//                                        is back under 250 ms, then the muxwatch_pubsub_ lines, each prefixed "metrics: "; exit 1 on a deadline
//   MuxWatch.TestApp stall <host:port> [bgsave|pause|kill|quiet-bgsave]
//                                        an app on its own default pool (2 cores: minimum 2) watching its multiplexer at the defaults:
//                                        50 async GETs and a sync GET in flight while the server sleeps in DEBUG SLEEP 2 (with a BGSAVE
//                                        sent just before it, if asked, whose fork falls inside the wait); "pause" stops the server's
//                                        process instead (SIGSTOP for 5 s: a paused host, nothing in the slow log); "kill" kills it
//                                        (SIGKILL) before the calls; "quiet-bgsave" turns the
//                                        slow log off and sleeps 3 s while a BGSAVE runs; print each recorded timeout as a JSON line once all are settled, then
//                                        "thrown: N" and the muxwatch_timeouts_total lines, each prefixed "metrics: "
//   MuxWatch.TestApp gc <host:port>      an app whose heap holds millions of small objects, running GETs (async and sync, 500 ms
//                                        timeouts) while blocking full collections pause it; output as for stall
//   MuxWatch.TestApp huge <host:port>    an app that reads a 200 MB value with 20 small GETs and a sync GET behind it on the same
//                                        connection (200 ms timeouts), the slow log on; output as for stall
//   MuxWatch.TestApp block <host:port>   an app whose 300 requests block on an async GET (GetAwaiter().GetResult()) on pool threads,
//                                        on the default pool (500 ms timeouts); output as for stall, with the muxwatch_threadpool_adjustments_total lines
//   MuxWatch.TestApp block <host:port> after-noise
//                                        as block, after a start-up blip (six pool threads blocked a moment), a 2 s stall of the
//                                        server (SIGSTOP) that ended 3 s before the burst, and beside a bystander (one pool thread
//                                        in a long wait of its own); prints "blip: <capture>" and "stall ended: <time>" first
//   MuxWatch.TestApp busy <host:port>    an app whose 150 work items compute 300 ms each on pool threads (nothing blocked) while it
//                                        GETs from a thread of its own (500 ms timeouts); output as for block
//   MuxWatch.TestApp fieldless <host:port>
//                                        an app with one multiplexer that throws, once the server's witness has answered, the
//                                        client's own RedisConnectionException whose message names no endpoint ("The connection
//                                        was closed before the command could be written", as 3.x throws it); output as for stall
using System.Reflection;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.Sinks;
using MuxWatch.Sources;
using Prometheus;
using StackExchange.Redis;

var builder = Host.CreateApplicationBuilder();
builder.Logging.ClearProviders(); // standard output carries only the JSON
builder.Configuration["MuxWatch:RecentTimeoutCapacity"] = "100";
builder.Configuration["MuxWatch:CaptureQueueCapacity"] = "500";
builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";
var registry = Metrics.NewCustomRegistry();
var watched = builder.Services.AddMuxWatch().UseMetricsRegistry(registry);
if (args is ["starve", var watchedEndpoint])
{
    watched.AddMultiplexer("app", $"{watchedEndpoint},syncTimeout=1000");
}

ConnectionMultiplexer? stallingApp = null;
if (args is ["stall" or "gc" or "huge" or "block" or "busy" or "fieldless", var stallEndpoint, ..])
{
    // The app's own multiplexer, observed as an app registers it; the probe and the server poll at their defaults.
    builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:01";
    if (args is [_, _, "kill"])
    {
        builder.Configuration["MuxWatch:CorrelationSettleTimeout"] = "00:00:05"; // a dead server is never polled again
    }

    if (args[0] is "block" or "busy")
    {
        builder.Configuration["MuxWatch:RecentTimeoutCapacity"] = "1000"; // every one of the burst's timeouts listed
    }

    // 500 ms timeouts; 200 ms behind the huge value, so that its calls time out however fast this machine copies it.
    var timeoutMs = args[0] == "huge" ? 200 : 500;
    stallingApp = await ConnectionMultiplexer.ConnectAsync($"{stallEndpoint},syncTimeout={timeoutMs},asyncTimeout={timeoutMs},abortConnect=false");
    watched.AddMultiplexer("app", _ => stallingApp);
}

ConnectionMultiplexer? subscribingApp = null;
if (args is ["pubsub", var pubSubEndpoint])
{
    subscribingApp = await ConnectionMultiplexer.ConnectAsync($"{pubSubEndpoint},abortConnect=false");
    watched.AddMultiplexer("app", _ => subscribingApp).MeasurePubSubLag("app");
}

using var host = builder.Build();
await host.StartAsync();

var exitCode = args switch
{
    ["starve", var endpoint] => await StarveAsync(host.Services, endpoint, registry),
    ["storm", var count] when int.TryParse(count, out var n) && n > 0 => await StormAsync(host.Services, n),
    ["pubsub", _] => await PubSubAsync(subscribingApp!, registry),
    ["stall", var endpoint, .. var rest] => await StallAsync(host.Services, stallingApp!, endpoint, rest is [var variant] ? variant : "sleep", registry),
    ["gc", var endpoint] => await GcPauseAsync(host.Services, stallingApp!, endpoint, registry),
    ["huge", var endpoint] => await HugeValueAsync(host.Services, stallingApp!, endpoint, registry),
    ["block", var endpoint] => await BlockOnTasksAsync(host.Services, stallingApp!, endpoint, registry, afterNoise: false),
    ["block", var endpoint, "after-noise"] => await BlockOnTasksAsync(host.Services, stallingApp!, endpoint, registry, afterNoise: true),
    ["busy", var endpoint] => await KeepThePoolBusyAsync(host.Services, stallingApp!, endpoint, registry),
    ["fieldless", var endpoint] => await ThrowFieldlessFailureAsync(host.Services, endpoint, registry),
    _ => 2,
};
await host.StopAsync();
if (stallingApp is not null)
{
    await stallingApp.DisposeAsync();
}

if (subscribingApp is not null)
{
    await subscribingApp.DisposeAsync();
}

return exitCode;

static async Task<int> StarveAsync(IServiceProvider services, string endpoint, CollectorRegistry registry)
{
    using var redis = await ConnectionMultiplexer.ConnectAsync($"{endpoint},syncTimeout=1000");
    var db = redis.GetDatabase();

    // MuxWatch running as in an app that has been up a while: the endpoint polled, its witness answered.
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint)?.Status().WitnessAnsweredAt is not null);
    db.StringSet("muxwatch:starved", "value");

    // Far more blocking work items than the pool's minimum. Replies from Redis are processed on pool
    // threads, so a synchronous GET now waits for a thread that does not come.
    using var release = new ManualResetEventSlim();
    for (var i = 0; i < 300; i++)
    {
        ThreadPool.UnsafeQueueUserWorkItem(_ => release.Wait(), null);
    }

    var timedOut = false;
    var caller = new Thread(() =>
    {
        for (var attempt = 0; attempt < 20 && !timedOut; attempt++)
        {
            try
            {
                db.StringGet("muxwatch:starved");
            }
            catch (RedisTimeoutException)
            {
                timedOut = true;
            }
        }
    });
    var starvedMetrics = string.Empty;
    var loop = services.GetRequiredService<ProbeLoopHealth>();
    var metricsReader = new Thread(() =>
    {
        // Still starved: wait (on this thread, not the pool) for two probe cycles, then read the export.
        caller.Join();
        var cycles = loop.Cycles;
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (loop.Cycles < cycles + 2 && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(10);
        }

        using var stream = new MemoryStream();
        registry.CollectAndExportAsTextAsync(stream).Wait(TimeSpan.FromSeconds(10));
        starvedMetrics = System.Text.Encoding.UTF8.GetString(stream.ToArray());
    });
    caller.Start();
    metricsReader.Start();
    metricsReader.Join();
    release.Set();

    var recent = services.GetRequiredService<RecentTimeouts>();
    await WaitAsync(() => !timedOut || recent.TotalAdded > 0);
    await WaitAsync(() => recent.Newest().All(t => t.Settled)); // counted once settled: print the count that follows
    foreach (var timeout in recent.Newest())
    {
        Console.WriteLine(MuxWatchJson.Serialize(TimeoutAnswer.From(timeout)));
    }

    using var afterwards = new MemoryStream();
    await registry.CollectAndExportAsTextAsync(afterwards);
    var counted = System.Text.Encoding.UTF8.GetString(afterwards.ToArray()).Split('\n').Where(line => line.StartsWith("muxwatch_timeouts_total", StringComparison.Ordinal));
    foreach (var line in starvedMetrics.Split('\n').Where(line => line.StartsWith("muxwatch_threadpool", StringComparison.Ordinal)).Concat(counted))
    {
        Console.WriteLine("metrics: " + line);
    }

    return timedOut ? 0 : 3;
}

static async Task<int> StormAsync(IServiceProvider services, int count)
{
    var constructor = typeof(RedisTimeoutException).GetConstructor(
        BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic, [typeof(string), typeof(CommandStatus)])!;
    var thrown = 0;
    var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
    {
        for (var i = t; i < count; i += 4)
        {
            var message = $"Timeout performing GET storm:{i} (5000ms), inst: 0, qu: 0, qs: {1 + (i % 50)}, in: 0, serverEndpoint: 10.9.{i % 200}.1:6379";
            try
            {
                throw (RedisTimeoutException)constructor.Invoke([message, CommandStatus.Sent]);
            }
            catch (RedisTimeoutException)
            {
                Interlocked.Increment(ref thrown);
            }
        }
    })).ToList();
    threads.ForEach(thread => thread.Start());
    threads.ForEach(thread => thread.Join());

    // What an app can read of MuxWatch: its status (as /status answers it) and the recent list.
    var status = services.GetRequiredService<MuxWatch.Hosting.MuxWatchStatus>();
    var recent = services.GetRequiredService<RecentTimeouts>();
    await WaitAsync(() => status.Read() is { } now && now.TotalRecorded + now.CaptureDropped >= thrown);
    var final = status.Read();
    Console.WriteLine(JsonSerializer.Serialize(new
    {
        thrown,
        recorded = final.TotalRecorded,
        dropped = final.CaptureDropped,
        kept = recent.Newest().Count,
        serverStall = final.RecordedByCause[TimeoutCause.ServerStall.ToName()],
        workingSetBytes = Environment.WorkingSet,
    }));
    return 0;
}

static async Task<int> StallAsync(IServiceProvider services, ConnectionMultiplexer app, string endpoint, string variant, CollectorRegistry registry)
{
    var duringBgsave = variant is "bgsave" or "quiet-bgsave";
    // The test's own control connection, not watched: it makes the server sleep, as an operator's command would.
    // Named as a batch job names its connection: the slow log records the name with the command it sent.
    using var control = await ConnectionMultiplexer.ConnectAsync($"{endpoint},allowAdmin=true,syncTimeout=15000,asyncTimeout=15000,name=nightly-export");
    var server = control.GetServer(control.GetEndPoints()[0]);
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint) is { CompleteThrough: not null } timeline && timeline.Status().WitnessAnsweredAt is not null);
    if (duringBgsave)
    {
        await server.ExecuteAsync("DEBUG", "POPULATE", "2000");
        await server.ExecuteAsync("CONFIG", "SET", "rdb-key-save-delay", "5000"); // the save then runs about 10 s
    }

    if (variant == "quiet-bgsave")
    {
        await server.ExecuteAsync("CONFIG", "SET", "slowlog-log-slower-than", "-1"); // the slow log off: the sleep leaves no trace
    }

    // Wait for a probe cycle after the last setup step, so the pool sample before the wait is a quiet one.
    var loop = services.GetRequiredService<ProbeLoopHealth>();
    var cycles = loop.Cycles;
    await WaitAsync(() => loop.Cycles > cycles);

    var db = app.GetDatabase();
    await db.StringSetAsync("muxwatch:stall", "v");
    if (duringBgsave)
    {
        // Sent just before the stall: its fork (a millisecond or two) falls inside every request's wait.
        await server.ExecuteAsync("BGSAVE");
    }

    var sleeping = variant switch
    {
        "pause" => PauseProcessAsync(control, TimeSpan.FromSeconds(5)),
        "kill" => KillProcessAsync(control, endpoint),
        "quiet-bgsave" => server.ExecuteAsync("DEBUG", "SLEEP", "3"),
        _ => server.ExecuteAsync("DEBUG", "SLEEP", "2"),
    };
    if (variant == "kill")
    {
        await sleeping; // the calls start once the server is gone
    }
    else
    {
        await WaitUntilBlockedAsync(endpoint); // the calls start only once the server is really asleep
    }
    var thrown = new Failures();
    var calls = Enumerable.Range(0, 50).Select(async _ =>
    {
        try
        {
            await db.StringGetAsync("muxwatch:stall");
        }
        catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
        {
            thrown.Note(ex);
        }
    }).ToList();
    var sync = new Thread(() =>
    {
        try
        {
            db.StringGet("muxwatch:stall");
        }
        catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
        {
            thrown.Note(ex);
        }
    });
    sync.Start();
    await Task.WhenAll(calls);
    sync.Join();
    await sleeping;
    if (duringBgsave)
    {
        await server.ExecuteAsync("CONFIG", "SET", "rdb-key-save-delay", "0");
    }

    // Every timeout of the app's own calls recorded and settled (the poll after the stall explains them).
    return await ReportAsync(services, thrown.Count, registry);
}

// Stops the server's process for the span (SIGSTOP, then SIGCONT), as a paused VM or a swapping host stops it:
// no command runs long, nothing is logged, the same process and connections afterwards.
static async Task<RedisResult> PauseProcessAsync(ConnectionMultiplexer control, TimeSpan span)
{
    var info = await control.GetServer(control.GetEndPoints()[0]).InfoAsync("server");
    var pid = info.SelectMany(group => group).Single(pair => pair.Key == "process_id").Value;
    using (var stop = System.Diagnostics.Process.Start("kill", ["-STOP", pid]))
    {
        await stop.WaitForExitAsync();
    }

    try
    {
        await Task.Delay(span); // the length of the fault being induced, not a wait for a condition
    }
    finally
    {
        using var resume = System.Diagnostics.Process.Start("kill", ["-CONT", pid]);
        await resume.WaitForExitAsync();
    }

    return RedisResult.Create(RedisValue.Null);
}

// Kills the server's process (SIGKILL, as a crash or an OOM kill does) and returns once it refuses connections.
static async Task<RedisResult> KillProcessAsync(ConnectionMultiplexer control, string endpoint)
{
    var info = await control.GetServer(control.GetEndPoints()[0]).InfoAsync("server");
    var pid = info.SelectMany(group => group).Single(pair => pair.Key == "process_id").Value;
    using (var kill = System.Diagnostics.Process.Start("kill", ["-KILL", pid]))
    {
        await kill.WaitForExitAsync();
    }

    var separator = endpoint.LastIndexOf(':');
    var deadline = DateTime.UtcNow.AddSeconds(5);
    while (DateTime.UtcNow < deadline)
    {
        using var socket = new System.Net.Sockets.TcpClient();
        try
        {
            await socket.ConnectAsync(endpoint[..separator], int.Parse(endpoint[(separator + 1)..], System.Globalization.CultureInfo.InvariantCulture));
        }
        catch (System.Net.Sockets.SocketException)
        {
            return RedisResult.Create(RedisValue.Null);
        }

        await Task.Delay(20);
    }

    throw new TimeoutException("the killed server still accepted connections");
}

static async Task<int> GcPauseAsync(IServiceProvider services, ConnectionMultiplexer app, string endpoint, CollectorRegistry registry)
{
    _ = app;
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint) is { CompleteThrough: not null } timeline && timeline.Status().WitnessAnsweredAt is not null);

    // A heap like a big cache's: millions of small live objects, which a full blocking collection must mark one by one.
    var heap = new object[40_000_000];
    for (var i = 0; i < heap.Length; i++)
    {
        heap[i] = new byte[24];
    }

    var db = app.GetDatabase();
    await db.StringSetAsync("muxwatch:gc", "v");
    var thrown = new Failures();
    using var done = new CancellationTokenSource();
    // Each call's start is kept with its failure: the wait as the app measured it, which the test holds against the
    // collections (a sync timeout's message gives its timeout, not when the call began).
    var callers = Enumerable.Range(0, 8).Select(_ => Task.Run(async () =>
    {
        while (!done.IsCancellationRequested)
        {
            var began = DateTimeOffset.UtcNow;
            try
            {
                await db.StringGetAsync("muxwatch:gc");
            }
            catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
            {
                thrown.Note(ex, began);
            }
        }
    })).ToList();
    var sync = new Thread(() =>
    {
        while (!done.IsCancellationRequested)
        {
            var began = DateTimeOffset.UtcNow;
            try
            {
                db.StringGet("muxwatch:gc");
            }
            catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
            {
                thrown.Note(ex, began);
            }
        }
    });
    sync.Start();
    var pauses = new List<double>();
    for (var round = 0; round < 6 && thrown.Count < 8; round++)
    {
        var before = GC.GetTotalPauseDuration();
        var collecting = DateTimeOffset.UtcNow;
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        Console.WriteLine(FormattableString.Invariant($"collection: {collecting:O} {DateTimeOffset.UtcNow:O}"));
        pauses.Add((GC.GetTotalPauseDuration() - before).TotalMilliseconds);
        var loop = services.GetRequiredService<ProbeLoopHealth>();
        var cycles = loop.Cycles;
        await WaitAsync(() => loop.Cycles > cycles + 1); // let the timeouts of this pause be thrown and read before the next
    }

    await done.CancelAsync();
    await Task.WhenAll(callers);
    sync.Join();
    GC.KeepAlive(heap);
    Console.WriteLine("pauses: " + string.Join(' ', pauses.Select(p => p.ToString("0", System.Globalization.CultureInfo.InvariantCulture))));
    thrown.PrintCalls();
    return await ReportAsync(services, thrown.Count, registry);
}

static async Task<int> HugeValueAsync(IServiceProvider services, ConnectionMultiplexer app, string endpoint, CollectorRegistry registry)
{
    // The value is written by the test's own connection (a long timeout), as another process would have written it.
    using (var writer = await ConnectionMultiplexer.ConnectAsync($"{endpoint},syncTimeout=60000,asyncTimeout=60000"))
    {
        await writer.GetDatabase().StringSetAsync("muxwatch:huge", new byte[200 * 1024 * 1024]);
        await writer.GetDatabase().StringSetAsync("muxwatch:small", "v");
    }

    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint) is { CompleteThrough: not null } timeline && timeline.Status().WitnessAnsweredAt is not null);
    var loop = services.GetRequiredService<ProbeLoopHealth>();
    var cycles = loop.Cycles;
    await WaitAsync(() => loop.Cycles > cycles);

    var db = app.GetDatabase();
    var thrown = new Failures();
    async Task CallAsync(Func<Task> call)
    {
        try
        {
            await call();
        }
        catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
        {
            thrown.Note(ex);
        }
    }

    var huge = CallAsync(() => db.StringGetAsync("muxwatch:huge"));
    var small = Enumerable.Range(0, 20).Select(_ => CallAsync(() => db.StringGetAsync("muxwatch:small"))).ToList();
    var sync = new Thread(() => CallAsync(() => Task.FromResult(db.StringGet("muxwatch:small"))).GetAwaiter().GetResult());
    sync.Start();
    await Task.WhenAll([huge, .. small]);
    sync.Join();
    return await ReportAsync(services, thrown.Count, registry);
}

static async Task<int> BlockOnTasksAsync(IServiceProvider services, ConnectionMultiplexer app, string endpoint, CollectorRegistry registry, bool afterNoise)
{
    // An app like a user's: a service method that calls an async Redis method and blocks on it
    // (GetAwaiter().GetResult()) on pool threads, and one in five requests another that blocks on a Task.Delay
    // (.Wait()): 300 requests in a burst on the default pool (2 cores: minimum 2). The replies are processed on
    // pool threads, which the blocked calls hold: the pool starves.
    await app.GetDatabase().StringSetAsync("muxwatch:cart", "value");
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint)?.Status().WitnessAnsweredAt is not null);

    if (afterNoise)
    {
        await MakeNoiseAsync(services, endpoint);
    }

    using var bystander = new ManualResetEventSlim();
    if (afterNoise)
    {
        // A hosted service's own long wait, on a pool thread, beside the app's blocking code: one thread, no culprit.
        ThreadPool.UnsafeQueueUserWorkItem(_ => Shop.NightlyJob.WaitForSignal(bystander), null);
    }

    var carts = new Shop.CartService(app.GetDatabase());
    var thrown = new Failures();
    using var done = new CountdownEvent(300);
    for (var i = 0; i < 300; i++)
    {
        var report = i % 5 == 1;
        ThreadPool.UnsafeQueueUserWorkItem(_ =>
        {
            try
            {
                if (report)
                {
                    Shop.ReportService.WaitForReport();
                }
                else
                {
                    _ = carts.LoadCart();
                }
            }
            catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
            {
                thrown.Note(ex);
            }
            finally
            {
                done.Signal();
            }
        }, null);
    }

    // Waited on a thread of its own: the pool is the thing starved.
    await Task.Factory.StartNew(() => done.Wait(TimeSpan.FromMinutes(2)), TaskCreationOptions.LongRunning);
    bystander.Set();
    return await ReportAsync(services, thrown.Count, registry, "muxwatch_threadpool_adjustments_total", "muxwatch_threadpool_stack_captures_total");
}

// What happens before the starvation in a real app, none of it the cause: a start-up blip (the first requests block a few
// pool threads for a moment, the runtime adds a thread, and MuxWatch may capture, finding nobody blocked by then or the
// blip's own warm-up), then the server stopped for 2 s (SIGSTOP: a silence MuxWatch's witness records) that ends 3 s
// before the burst begins, which comes inside the capture interval (5 minutes) once the least time between two captures
// (10 s) has passed since the blip's capture.
static async Task MakeNoiseAsync(IServiceProvider services, string endpoint)
{
    var status = services.GetRequiredService<MuxWatch.Hosting.MuxWatchStatus>();
    IReadOnlyList<PoolStackCapture> Captures() => status.Read().PoolStacks?.Captures ?? [];
    await Task.Factory.StartNew(() =>
    {
        using var warmed = new CountdownEvent(6);
        for (var i = 0; i < 6; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_ =>
            {
                Shop.Startup.WarmCache();
                warmed.Signal();
            }, null);
        }

        warmed.Wait(TimeSpan.FromSeconds(30));
    }, TaskCreationOptions.LongRunning);
    // Captured or not: MuxWatch captures only while work waits for a thread, which a blip's few items may never make
    // (issue 52: a start-up's one-off wait is no starvation). Either way it must not speak for the starvation to come.
    var blipEnded = DateTimeOffset.UtcNow;
    await WaitAsync(() => (Captures().Count > 0 && status.Read().PoolStacks is { Capturing: false }) || DateTimeOffset.UtcNow >= blipEnded + TimeSpan.FromSeconds(3));
    var blipAt = blipEnded;
    if (Captures() is [var blip, ..])
    {
        Console.WriteLine($"blip: {MuxWatchJson.Serialize(blip)}");
        blipAt = blip.At;
    }

    await WaitAsync(() => DateTimeOffset.UtcNow >= blipAt + TimeSpan.FromSeconds(5));
    using var control = await ConnectionMultiplexer.ConnectAsync($"{endpoint},allowAdmin=true");
    await PauseProcessAsync(control, TimeSpan.FromSeconds(2));
    var resumed = DateTimeOffset.UtcNow;
    Console.WriteLine($"stall ended: {resumed:O}");
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint)?.Status().WitnessAnsweredAt > resumed);
    var start = new[] { resumed + TimeSpan.FromSeconds(3), blipAt + TimeSpan.FromSeconds(10.5) }.Max();
    await WaitAsync(() => DateTimeOffset.UtcNow >= start); // the shape of the scenario, not a wait for a condition
}

static async Task<int> ThrowFieldlessFailureAsync(IServiceProvider services, string endpoint, CollectorRegistry registry)
{
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint)?.Status().WitnessAnsweredAt is not null);

    // The witness answering for a while before the failure, as in an app up for long: a second answer after the first.
    var first = timelines.Find(endpoint)!.Status().WitnessAnsweredAt;
    await WaitAsync(() => timelines.Find(endpoint)!.Status().WitnessAnsweredAt > first);
    try
    {
#pragma warning disable CS0618 // 3.x prefers an overload with CommandFlags, which the 2.x floor this app also runs on lacks
        throw new RedisConnectionException(ConnectionFailureType.SocketClosed, "The connection was closed before the command could be written");
#pragma warning restore CS0618
    }
    catch (RedisConnectionException)
    {
        // as the app's own catch would
    }

    return await ReportAsync(services, 1, registry);
}

static async Task<int> KeepThePoolBusyAsync(IServiceProvider services, ConnectionMultiplexer app, string endpoint, CollectorRegistry registry)
{
    // An app like a user's whose requests compute on pool threads (CPU-bound, nothing blocked): 150 work items of
    // 300 ms of computing each on the default pool (2 cores: minimum 2), while its GETs (500 ms timeouts) need a pool
    // thread to have their replies processed.
    await app.GetDatabase().StringSetAsync("muxwatch:cart", "value");
    var timelines = services.GetRequiredService<MuxWatch.State.ServerTimelines>();
    await WaitAsync(() => timelines.Find(endpoint)?.Status().WitnessAnsweredAt is not null);

    using var done = new CountdownEvent(150);
    for (var i = 0; i < 150; i++)
    {
        ThreadPool.UnsafeQueueUserWorkItem(_ =>
        {
            GC.KeepAlive(Shop.PriceCalculator.Compute());
            done.Signal();
        }, null);
    }

    // The app's calls, from a thread of its own (the pool is the thing kept busy), until the busy work is done.
    var db = app.GetDatabase();
    var thrown = new Failures();
    var caller = new Thread(() =>
    {
        while (!done.IsSet)
        {
            try
            {
                db.StringGet("muxwatch:cart");
            }
            catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
            {
                thrown.Note(ex);
            }
        }
    });
    caller.Start();
    await Task.Factory.StartNew(() => { done.Wait(TimeSpan.FromMinutes(2)); caller.Join(); }, TaskCreationOptions.LongRunning);
    return await ReportAsync(services, thrown.Count, registry, "muxwatch_threadpool_adjustments_total", "muxwatch_threadpool_stack_captures_total");
}

// Every timeout of the app's own calls recorded and settled; printed as JSON lines, then "thrown: N" and the counters
// (muxwatch_timeouts_total, and the families named).
static async Task<int> ReportAsync(IServiceProvider services, int thrown, CollectorRegistry registry, params string[] families)
{
    var recent = services.GetRequiredService<RecentTimeouts>();
    var loop = services.GetRequiredService<ProbeLoopHealth>();
    static bool AllIn(IReadOnlyList<ObservedTimeout> timeouts, int thrown) =>
        timeouts.Count(t => t.Source == "first-chance" && t.Multiplexer == "app") >= thrown && timeouts.All(t => t.Settled);

    // Quiet, not only complete: every call recorded and settled, and nothing more recorded over the next two probe
    // cycles. 2.x may raise, inside itself, a write timeout for a sync call it had already given up on after the call
    // threw; recorded after a first look found everything in, it was printed unsettled (seen once in CI on 2.6.90).
    // Everything below is printed from one snapshot, so what the test reads agrees with itself.
    IReadOnlyList<ObservedTimeout> snapshot = recent.Newest();
    var deadline = DateTime.UtcNow.AddSeconds(30);
    while (DateTime.UtcNow < deadline)
    {
        snapshot = recent.Newest();
        if (!AllIn(snapshot, thrown))
        {
            await Task.Delay(20);
            continue;
        }

        var cycles = loop.Cycles;
        await WaitAsync(() => loop.Cycles >= cycles + 2 || recent.Newest().Count != snapshot.Count);
        var again = recent.Newest();
        if (again.Count == snapshot.Count && AllIn(again, thrown))
        {
            snapshot = again;
            break;
        }
    }

    foreach (var timeout in snapshot)
    {
        Console.WriteLine(MuxWatchJson.Serialize(TimeoutAnswer.From(timeout)));
    }

    Console.WriteLine($"thrown: {thrown}");
    Console.WriteLine("status: " + MuxWatchJson.Serialize(services.GetRequiredService<MuxWatch.Hosting.MuxWatchStatus>().Read()));
    using var stream = new MemoryStream();
    await registry.CollectAndExportAsTextAsync(stream);
    foreach (var line in System.Text.Encoding.UTF8.GetString(stream.ToArray()).Split('\n').Where(line => ((string[])["muxwatch_timeouts_total", .. families]).Any(family => line.StartsWith(family, StringComparison.Ordinal))))
    {
        Console.WriteLine("metrics: " + line);
    }

    return thrown > 0 && AllIn(snapshot, thrown) ? 0 : 3;
}

// Blocked: a PING on a connection of its own gets no answer within 100 ms. A raw socket, so that no client
// timeout is thrown for MuxWatch to catch; a healthy loopback server answers in well under a millisecond.
static async Task WaitUntilBlockedAsync(string endpoint)
{
    var separator = endpoint.LastIndexOf(':');
    var (host, port) = (endpoint[..separator], int.Parse(endpoint[(separator + 1)..], System.Globalization.CultureInfo.InvariantCulture));
    var deadline = DateTime.UtcNow.AddSeconds(5);
    var reply = new byte[16];
    while (DateTime.UtcNow < deadline)
    {
        using var socket = new System.Net.Sockets.TcpClient();
        await socket.ConnectAsync(host, port);
        var stream = socket.GetStream();
        await stream.WriteAsync("PING\r\n"u8.ToArray());
        using var answered = new CancellationTokenSource(TimeSpan.FromMilliseconds(100));
        try
        {
            _ = await stream.ReadAtLeastAsync(reply, 1, throwOnEndOfStream: false, answered.Token); // "+PONG", or nothing while blocked
        }
        catch (OperationCanceledException)
        {
            return;
        }
    }

    throw new TimeoutException("the server never stopped answering after DEBUG SLEEP");
}

static async Task<int> PubSubAsync(ConnectionMultiplexer app, CollectorRegistry registry)
{
    // The app's own subscription, handled the default way (a handler: the client runs it on a pool thread
    // per message), by a handler that blocks: the pool runs short of threads and every delivery waits.
    var slow = 1;
    var subscriber = app.GetSubscriber();
    var channel = new RedisChannel("app-events", RedisChannel.PatternMode.Literal);
    await subscriber.SubscribeAsync(channel, (_, _) =>
    {
        if (Volatile.Read(ref slow) == 1)
        {
            Thread.Sleep(1000);
        }
    });

    using var publishing = new CancellationTokenSource();
    var publisher = Task.Run(async () =>
    {
        while (!publishing.IsCancellationRequested)
        {
            for (var i = 0; i < 10; i++)
            {
                await subscriber.PublishAsync(channel, "event", CommandFlags.FireAndForget);
            }

            await Task.Delay(100); // pacing the app's traffic (100 a second), not waiting for a condition
        }
    });

    try
    {
        var lag = await WaitForLagAsync(registry, lag => lag > 1.0, TimeSpan.FromSeconds(60));
        if (lag is null)
        {
            return 1;
        }

        Console.WriteLine(FormattableString.Invariant($"slow: {lag}"));
        Volatile.Write(ref slow, 0);
        lag = await WaitForLagAsync(registry, lag => lag < 0.25, TimeSpan.FromSeconds(90));
        if (lag is null)
        {
            return 1;
        }

        Console.WriteLine(FormattableString.Invariant($"fast: {lag}"));
        foreach (var line in (await RenderAsync(registry)).Split('\n').Where(l => l.StartsWith("muxwatch_pubsub_", StringComparison.Ordinal) || l.StartsWith("muxwatch_subscription_", StringComparison.Ordinal)))
        {
            Console.WriteLine("metrics: " + line);
        }

        return 0;
    }
    finally
    {
        await publishing.CancelAsync();
        await publisher;
    }
}

static async Task<double?> WaitForLagAsync(CollectorRegistry registry, Func<double, bool> condition, TimeSpan within)
{
    var deadline = DateTime.UtcNow + within;
    while (DateTime.UtcNow < deadline)
    {
        var line = (await RenderAsync(registry)).Split('\n').FirstOrDefault(l => l.StartsWith("muxwatch_pubsub_lag_seconds{", StringComparison.Ordinal));
        if (line is not null && double.TryParse(line[(line.LastIndexOf(' ') + 1)..], System.Globalization.CultureInfo.InvariantCulture, out var lag) && condition(lag))
        {
            return lag;
        }

        await Task.Delay(50);
    }

    return null;
}

static async Task<string> RenderAsync(CollectorRegistry registry)
{
    using var text = new MemoryStream();
    await registry.CollectAndExportAsTextAsync(text);
    return System.Text.Encoding.UTF8.GetString(text.ToArray());
}

static async Task WaitAsync(Func<bool> condition)
{
    var deadline = DateTime.UtcNow.AddSeconds(30);
    while (!condition() && DateTime.UtcNow < deadline)
    {
        await Task.Delay(20);
    }
}
