using Microsoft.Playwright;
using MuxWatch.Testing;

namespace MuxWatch.Browser.Tests;

/// <summary>
/// Debian's <c>chromium</c> driven by Playwright: no browser download is possible here, so the
/// system's browser is the executable (test.sh installs it). One browser per test class.
/// </summary>
public sealed class BrowserSession : IAsyncLifetime
{
    /// <summary>Where Debian puts it; <c>MUXWATCH_CHROMIUM</c> names another.</summary>
    public static string Executable { get; } = Environment.GetEnvironmentVariable("MUXWATCH_CHROMIUM") is { Length: > 0 } configured ? configured : "/usr/bin/chromium";

    private IPlaywright _playwright = null!;

    public IBrowser Browser { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        if (!File.Exists(Executable))
        {
            throw new InvalidOperationException($"{Executable} is missing: the browser tests need Debian's chromium (apt-get install chromium; test.sh installs it)");
        }

        _playwright = await Playwright.CreateAsync();
        Browser = await _playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions { ExecutablePath = Executable, Headless = true });
    }

    public async Task DisposeAsync()
    {
        await Browser.DisposeAsync();
        _playwright.Dispose();
    }

    /// <summary>A fresh page (its own storage) whose console errors and failed scripts are collected.</summary>
    public async Task<(IPage Page, List<string> Errors)> NewPageAsync()
    {
        var context = await Browser.NewContextAsync(new BrowserNewContextOptions { ViewportSize = new ViewportSize { Width = 1400, Height = 1000 } });
        var page = await context.NewPageAsync();
        var errors = new List<string>();
        page.Console += (_, message) =>
        {
            if (message.Type == "error")
            {
                lock (errors)
                {
                    errors.Add(message.Text);
                }
            }
        };
        page.PageError += (_, error) =>
        {
            lock (errors)
            {
                errors.Add(error);
            }
        };
        return (page, errors);
    }

    /// <summary>Where a test's screenshots go: the test results folder test.sh keeps.</summary>
    public static string ScreenshotPath(string name)
    {
        var folder = Path.Combine(BuiltProgram.RepositoryRoot, "artifacts", "test-results");
        Directory.CreateDirectory(folder);
        return Path.Combine(folder, name);
    }
}
