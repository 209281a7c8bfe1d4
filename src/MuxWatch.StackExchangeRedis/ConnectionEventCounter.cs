using MuxWatch.Export;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Counts a watched multiplexer's connection events into <c>muxwatch_connection_events_total</c>: handlers
/// attached when MuxWatch starts watching it and detached when it stops (the app's multiplexer is only observed).
/// </summary>
/// <remarks>Events are counted, never ordered: ConnectionRestored can arrive before its ConnectionFailed (measured).</remarks>
internal sealed class ConnectionEventCounter(MultiplexerMetrics metrics, string multiplexer, BoundedLabelValues endpoints, Action<string, Exception?>? failed = null)
{
    private volatile bool _stopped;

    public void Attach(IConnectionMultiplexer watched)
    {
        watched.ConnectionFailed += OnConnectionFailed;
        watched.ConnectionRestored += OnConnectionRestored;
        watched.ErrorMessage += OnErrorMessage;
        watched.InternalError += OnInternalError;
        watched.ServerMaintenanceEvent += OnServerMaintenance;
    }

    public void Detach(IConnectionMultiplexer watched)
    {
        watched.ConnectionFailed -= OnConnectionFailed;
        watched.ConnectionRestored -= OnConnectionRestored;
        watched.ErrorMessage -= OnErrorMessage;
        watched.InternalError -= OnInternalError;
        watched.ServerMaintenanceEvent -= OnServerMaintenance;
    }

    /// <summary>No more counting: an event raised while the handlers are being detached must not bring a removed series back.</summary>
    public void Stop() => _stopped = true;

    public void Count(string name, System.Net.EndPoint? endpoint, string failureType)
    {
        if (_stopped)
        {
            return;
        }

        var label = endpoint is null ? "unknown" : endpoints.Admit(EndpointText.Of(endpoint));
        metrics.ConnectionEvents.WithLabels(multiplexer, label, name, failureType).Inc();
    }

    private void OnConnectionFailed(object? sender, ConnectionFailedEventArgs e)
    {
        Count("connection-failed", e.EndPoint, e.FailureType.ToString());
        failed?.Invoke(e.FailureType.ToString(), e.Exception);
    }

    private void OnConnectionRestored(object? sender, ConnectionFailedEventArgs e) => Count("connection-restored", e.EndPoint, e.FailureType.ToString());

    private void OnErrorMessage(object? sender, RedisErrorEventArgs e) => Count("error-message", e.EndPoint, "none");

    private void OnInternalError(object? sender, InternalErrorEventArgs e) => Count("internal-error", e.EndPoint, "none");

    private void OnServerMaintenance(object? sender, StackExchange.Redis.Maintenance.ServerMaintenanceEvent e) => Count("server-maintenance", null, "none");
}
