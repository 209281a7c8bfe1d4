using Microsoft.Extensions.Logging;
using MuxWatch.Reading;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>The polling connection cloned from an app's multiplexer (<see cref="ServerPollProbe"/>), in a file of its own.</summary>
internal sealed partial class ServerPollProbe
{
    /// <summary>MuxWatch's own admin connection for one watched multiplexer, made in the background.</summary>
    private sealed class AdminConnection(IConnectionMultiplexer source) : IAsyncDisposable
    {
        private readonly Lock _gate = new();
        private IConnectionMultiplexer? _connection;
        private Task? _connecting;
        private DateTimeOffset _nextAttempt = DateTimeOffset.MinValue;
        private DateTimeOffset _nextHoldCheck = DateTimeOffset.MinValue;
        private bool _disposed;

        public IConnectionMultiplexer Source { get; } = source;

        public IConnectionMultiplexer? Connection => Volatile.Read(ref _connection);

        /// <summary>True when the last attempt to connect threw (a later multiplexer of the same endpoints may open its own).</summary>
        public bool LastAttemptFailed { get; private set; }

        public void StartConnecting(DateTimeOffset now, TimeSpan timeout, ILogger logger)
        {
            lock (_gate)
            {
                if (_disposed || _connecting is { IsCompleted: false } || now < _nextAttempt)
                {
                    return;
                }

                _nextAttempt = now + ConnectRetry;
                _connecting = Task.Run(() => ConnectAsync(timeout, logger));
            }
        }

        /// <summary>
        /// Asks the polling connection to re-read its topology when it does not hold every one of
        /// the endpoints of <paramref name="servers"/> (a node added since it connected): at most every <see cref="ConnectRetry"/>.
        /// </summary>
        public void EnsureHolds(IServer[] servers, DateTimeOffset now)
        {
            if (Connection is not { } connection || now < _nextHoldCheck)
            {
                return;
            }

            _nextHoldCheck = now + ConnectRetry;
            var held = connection.GetEndPoints().Select(EndpointText.Of).ToHashSet(StringComparer.OrdinalIgnoreCase);
            if (!servers.All(server => held.Contains(EndpointText.Of(server.EndPoint))))
            {
                // Off the loop, and observed: MuxWatch's own connection, so it may be reconfigured.
                FireAndForget.Observe(connection.ConfigureAsync());
            }
        }

        public async ValueTask DisposeAsync()
        {
            lock (_gate)
            {
                _disposed = true;
            }

            if (Interlocked.Exchange(ref _connection, null) is { } connection)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }

        /// <summary>The polling connection's heartbeat (the client's default is 1 s): the calm poll's 10 s.</summary>
        internal static readonly TimeSpan PollingHeartbeat = TimeSpan.FromSeconds(10);

        private async Task ConnectAsync(TimeSpan timeout, ILogger logger)
        {
            ConfigurationOptions options;
            try
            {
                // The app's configuration, cloned: its endpoints and credentials, nothing of the app's changed.
                options = ConfigurationOptions.Parse(Source.Configuration);

                // And every server the app's client holds now (a cluster's discovered nodes, a primary's
                // replicas): the clone connects to each directly rather than depend on discovering them
                // again within its connect timeout, which under load it may not. (Not for a Sentinel
                // configuration, whose endpoints are the Sentinels.)
                foreach (var known in string.IsNullOrEmpty(options.ServiceName) ? Source.GetEndPoints() : [])
                {
                    if (!options.EndPoints.Contains(known))
                    {
                        options.EndPoints.Add(known);
                    }
                }
            }
            catch (ArgumentException ex)
            {
                LastAttemptFailed = true;
                LogConnectFailed(logger, "a multiplexer", SecretRedactor.Redact(ex.Message));
                return;
            }

            options.AllowAdmin = true; // INFO and SLOWLOG refuse without it
            options.ClientName = ClientName;

            // No subscription connection: the poller never subscribes.
            options = OwnedConnection.WithoutSubscriptions(options);
            options.AbortOnConnectFail = false;

            // The client's heartbeat wakes the thread pool every second per multiplexer to look for timed-out
            // commands and idle sockets, and reconnects a lost connection; every poll command has its own
            // timeout here, and the keep-alive needs a beat well under a minute. At 1 s it was most of what
            // watching cost an idle app; at 10 s a restarted server is polled again within about 10 s.
            options.HeartbeatInterval = PollingHeartbeat;
            var milliseconds = (int)Math.Clamp(timeout.TotalMilliseconds, 100, int.MaxValue);
            options.ConnectTimeout = milliseconds;
            options.SyncTimeout = milliseconds;
            options.AsyncTimeout = milliseconds;
            try
            {
                var connection = await OwnedConnection.ConnectAsync(options).ConfigureAwait(false);
                LastAttemptFailed = false;
                lock (_gate)
                {
                    if (!_disposed)
                    {
                        _connection = connection;
                        return;
                    }
                }

                await connection.DisposeAsync().ConfigureAwait(false);
            }
#pragma warning disable CA1031 // a connection that cannot be made is logged and tried again later
            catch (Exception ex)
#pragma warning restore CA1031
            {
                LastAttemptFailed = true;
                LogConnectFailed(logger, string.Join(",", options.EndPoints.Select(EndpointText.Of)), SecretRedactor.Redact(ex.Message));
            }
        }
    }
}
