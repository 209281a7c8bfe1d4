using Microsoft.Extensions.Hosting;
using MuxWatch.Export;

namespace MuxWatch.Hosting;

/// <summary>
/// Creates the <c>MuxWatch</c> meter when the host starts (<c>MuxWatch:Meter</c> on; <paramref name="meter"/> null
/// when off), so that its instruments exist before a listener's first collection.
/// </summary>
internal sealed class MeterPublication(MuxWatchMeter? meter) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        GC.KeepAlive(meter);
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
