using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Sources;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The probe's PING of one endpoint: its round trip into <c>muxwatch_ping_seconds</c>, its failures counted
/// by kind, and its own Redis timeouts submitted to the pipeline like an app's, as source <c>probe</c>.
/// </summary>
internal sealed class EndpointPinger(string multiplexer, MultiplexerMetrics metrics, ProbeOutcome outcome, TimeProvider time)
{
    private volatile bool _sawDisposed;

    /// <summary>True once a PING found the multiplexer disposed (the app disposed it): the next cycle retires it.</summary>
    public bool SawDisposed => _sawDisposed;

    public void Reset() => _sawDisposed = false;

    /// <summary>Starts a PING unless one is in flight; never waits for it: the loop never waits on the network.</summary>
    public void Start(IServer server, WatchedEndpoint endpoint, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        if (endpoint.TryStartPing())
        {
            _ = PingAsync(server, endpoint, probeTimeout, pipeline, stopping);
        }
    }

    private async Task PingAsync(IServer server, WatchedEndpoint endpoint, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        var started = time.GetTimestamp();
        var sent = time.GetUtcNow();
        try
        {
            using (ProbeScope.Enter())
            {
                await UntracedCommand.Send(() => server.PingAsync()).WaitAsync(probeTimeout, time, stopping).ConfigureAwait(false);
            }

            endpoint.Series.ObservePing(time.GetElapsedTime(started).TotalSeconds);
            outcome.Succeeded(endpoint, time.GetUtcNow());
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
        {
            // The probe's own timeout: recorded and diagnosed like an app's, marked as the probe's.
            metrics.PingFailures.WithLabels(multiplexer, endpoint.Endpoint, ex is RedisTimeoutException ? "timeout" : "connection").Inc();
            outcome.Failed(ex.Message);
            pipeline.Submit(new TimeoutObservation(time.GetUtcNow(), TimeoutSources.Probe, RedisMessage.FromException(ex))
            {
                Multiplexer = multiplexer,
                WaitStarted = sent,
                ThreadPoolAtCatch = ThreadPoolSnapshot.Capture(),
            });
        }
        catch (TimeoutException)
        {
            metrics.PingFailures.WithLabels(multiplexer, endpoint.Endpoint, "probe-timeout").Inc();
            outcome.Failed($"PING to {endpoint.Endpoint} did not complete within the probe timeout ({probeTimeout.TotalSeconds:0.###} s)");
        }
        catch (ObjectDisposedException)
        {
            _sawDisposed = true;
        }
#pragma warning disable CA1031 // a PING that fails in any other way is counted and reported, never thrown into the void
        catch (Exception ex)
#pragma warning restore CA1031
        {
            metrics.PingFailures.WithLabels(multiplexer, endpoint.Endpoint, "error").Inc();
            outcome.Failed($"{ex.GetType().Name}: {ex.Message}");
        }
        finally
        {
            endpoint.PingDone();
        }
    }
}
