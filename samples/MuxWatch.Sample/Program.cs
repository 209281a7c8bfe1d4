using StackExchange.Redis;

var builder = WebApplication.CreateBuilder(args);

// The app's own multiplexer, as it has always made it.
var redis = builder.Configuration["Redis"] ?? "localhost:6379";
builder.Services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(redis));

// MuxWatch: the one call. The multiplexer is only observed, never reconfigured.
builder.Services.AddMuxWatch()
    .AddMultiplexer("cache", services => services.GetRequiredService<IConnectionMultiplexer>());

var app = builder.Build();

app.MapGet("/cache/{key}", async (string key, IConnectionMultiplexer multiplexer) =>
{
    try
    {
        var value = await multiplexer.GetDatabase().StringGetAsync(key);
        return Results.Ok(new { key, value = (string?)value });
    }
    catch (RedisTimeoutException)
    {
        // MuxWatch caught it too: /metrics counts it by cause, /muxwatch/timeouts says why.
        return Results.StatusCode(StatusCodes.Status503ServiceUnavailable);
    }
});

app.MapMuxWatchMetrics();   // GET /metrics
app.MapMuxWatchApi();       // GET /muxwatch/timeouts, /status, /targets, /events
app.MapMuxWatchPage();      // GET /muxwatch/: the status page

app.Run();
