using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace MuxWatch.Tests;

public sealed class MuxWatchRegistrationTests
{
    [Fact]
    public void AddMuxWatch_registers_the_timeout_log_and_the_loop_once_even_when_called_twice()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().Build()); // as every host provides

        services.AddMuxWatch();
        services.AddMuxWatch();
        using var provider = services.BuildServiceProvider();

        Assert.Same(provider.GetRequiredService<RecentTimeouts>(), provider.GetRequiredService<RecentTimeouts>());
        var hosted = provider.GetServices<IHostedService>().Select(service => service.GetType().Name).Order().ToList();
        Assert.Equal(["MeterPublication", "ProbeLoop", "ThreadPoolEvents", "TimeoutCaptureService", "WitnessThread"], hosted);
        Assert.Equal(1000, provider.GetRequiredService<RecentTimeouts>().Capacity);
    }

    [Theory]
    [InlineData("RecentTimeoutCapacity", "0")]
    [InlineData("RecentTimeoutCapacity", "100001")]
    [InlineData("CaptureQueueCapacity", "0")]
    [InlineData("CaptureQueueCapacity", "-5")]
    [InlineData("TimeoutLogInterval", "-00:00:01")]
    [InlineData("TimeoutLogInterval", "02:00:00")]
    [InlineData("WitnessInterval", "00:00:00.050")]
    public async Task An_invalid_setting_stops_start_up_naming_the_setting(string setting, string value)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration[$"MuxWatch:{setting}"] = value;
        builder.Services.AddMuxWatch();
        using var host = builder.Build();

        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.True(error.Message.Contains($"MuxWatch:{setting}", StringComparison.Ordinal), error.Message);
    }

    [Theory]
    [InlineData("true", true)]
    [InlineData("false", false)]
    public async Task The_capture_setting_decides_whether_the_hook_listens(string setting, bool listening)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:CaptureFirstChanceExceptions"] = setting;
        builder.Services.AddMuxWatch();
        using var host = builder.Build();

        await host.StartAsync();
        var catcher = host.Services.GetRequiredService<FirstChanceRedisErrorCatcher>();
        var listeningWhileRunning = catcher.IsListening;
        await host.StopAsync();

        Assert.Equal(listening, listeningWhileRunning);
    }

    [Theory]
    [InlineData("Timeout awaiting response (outbound=0KiB, inbound=0KiB, 5023ms elapsed, timeout is 5000ms), command=GET, qs: 1", 5023)]
    [InlineData("Timeout performing GET k (2000ms), qs: 1, in: 0", 2000)]
    [InlineData("Timeout performing GET k, inst: 0, queue: 1, qu: 0, qs: 1", null)]
    public void The_waiting_window_comes_from_the_elapsed_or_timeout_figure(string message, int? waitedMilliseconds)
    {
        var report = TimeoutMessageReader.Read(message);
        var at = DateTimeOffset.Parse("2026-11-22T12:00:00Z", System.Globalization.CultureInfo.InvariantCulture);

        var observed = new ObservedTimeout(at, "api", null, report, TimeoutDiagnoser.Diagnose(report));

        Assert.Equal(waitedMilliseconds is { } ms ? at.AddMilliseconds(-ms) : null, observed.WaitingSince);
    }

    [Fact]
    public void Recent_timeouts_keep_the_newest_first_and_stay_bounded()
    {
        var recent = new RecentTimeouts(capacity: 3);
        var report = TimeoutMessageReader.Read("Timeout performing GET k (1ms), qs: 1, in: 0");
        for (var i = 0; i < 10; i++)
        {
            recent.Add(new ObservedTimeout(DateTimeOffset.UnixEpoch.AddSeconds(i), "api", null, report, TimeoutDiagnoser.Diagnose(report)));
        }

        var newest = recent.Newest();

        Assert.Equal([9, 8, 7], newest.Select(t => (int)t.Time.ToUnixTimeSeconds()));
        Assert.Equal(10, recent.TotalAdded);
        Assert.Single(recent.Newest(limit: 1));
    }
}
