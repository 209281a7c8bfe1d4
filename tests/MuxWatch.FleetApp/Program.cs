// One replica of a user's web app with MuxWatch in-process. Usage:
//   MuxWatch.FleetApp --urls http://127.0.0.1:PORT --Redis host:port,asyncTimeout=500,syncTimeout=500 [--MuxWatch:Setting=value ...]
// Its own traffic: eight requests at a time read the cart, all the time (a timeout is caught and counted by MuxWatch).
// POST /checkout/block?seconds=S: the checkout's bug, on demand: 300 pool threads block on an async GET
// (GetAwaiter().GetResult()) for S seconds, starving this replica's pool and nobody else's.
using StackExchange.Redis;

var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();

var redis = builder.Configuration["Redis"] ?? "localhost:6379";
builder.Services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis + ",abortConnect=false"));
builder.Services.AddMuxWatch().AddMultiplexer("cache", services => services.GetRequiredService<IConnectionMultiplexer>());
builder.Services.AddHostedService<CartTraffic>();

var app = builder.Build();

app.MapPost("/checkout/block", (int seconds, IConnectionMultiplexer multiplexer) =>
{
    var until = DateTime.UtcNow.AddSeconds(Math.Clamp(seconds, 1, 60));
    // Queued from a thread of its own once this answer is on its way: behind 300 blocked items, the answer would wait too.
    new Thread(() =>
    {
        Thread.Sleep(200);
        for (var i = 0; i < 300; i++)
        {
            ThreadPool.QueueUserWorkItem(_ => CheckOutUntil(multiplexer, until));
        }
    }) { IsBackground = true }.Start();
    return Results.Accepted();
});
app.MapMuxWatchMetrics();
app.MapMuxWatchApi();

app.Run();

// The checkout's bug: it blocks a pool thread on an async GET, again and again until the given time.
static void CheckOutUntil(IConnectionMultiplexer multiplexer, DateTime until)
{
    while (DateTime.UtcNow < until)
    {
        try
        {
#pragma warning disable SER307 // the very mistake this checkout makes on purpose: sync over async on pool threads
            multiplexer.GetDatabase().StringGetAsync("cart").GetAwaiter().GetResult();
#pragma warning restore SER307
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException) // RedisTimeoutException is a TimeoutException
        {
            // timed out: the next checkout blocks again
        }
    }
}

/// <summary>The replica's own requests: eight at a time read the cart, every 100 ms each, whatever happens.</summary>
internal sealed class CartTraffic(IConnectionMultiplexer multiplexer) : BackgroundService
{
    protected override Task ExecuteAsync(CancellationToken stoppingToken) => Task.WhenAll(Enumerable.Range(0, 8).Select(async _ =>
    {
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                await multiplexer.GetDatabase().StringGetAsync("cart");
            }
            catch (Exception ex) when (ex is RedisException or TimeoutException) // RedisTimeoutException is a TimeoutException
            {
                // a timeout or a lost connection: MuxWatch counts it; the request fails as a user's would
            }

            try
            {
                await Task.Delay(100, stoppingToken);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }));
}
